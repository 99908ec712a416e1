// Progress of a long command (evolve, bench, curate): one overwritten status line on a
// terminal, plain lines otherwise, and every printed line also appended to a log file.
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace ks {

struct ProgressState {
  int round = 0;
  int rounds = 0;
  std::optional<double> best_speedup;
  int evaluations_done = 0;
  int evaluations_in_flight = 0;
  int proposals_in_flight = 0;
  std::map<std::string, int> failures;  // by kind: compile_error, unusable_reply, ...
};

// The status line for `state`, e.g.
// "round 3/40  best 1.42x  evals 12 (+2 running)  proposals 4 in flight  failures: ...".
std::string FormatProgress(const ProgressState& state);

class Progress {
 public:
  // `log_path` empty: no log file. `tty`: overwrite one line on `out` instead of printing lines.
  // `plain_interval_s`: at most one status line printed (without a tty) and logged per that
  // many seconds; 0: every change.
  Progress(std::FILE* out, bool tty, const std::string& log_path, double plain_interval_s = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // A notable event: printed (above the status line on a terminal) and logged.
  void Log(const std::string& line);
  // The current status line, e.g. "extract 120/400 files  modules 530": redrawn on a terminal
  // when it changed; printed and logged when it changed and the interval has passed.
  void Status(const std::string& line);
  // Status(FormatProgress(state)).
  void Update(const ProgressState& state);
  // Ends the status line (newline) so later output starts clean.
  void Finish();

 private:
  std::mutex mu_;
  std::FILE* out_;
  const bool tty_;
  const double plain_interval_s_;
  std::FILE* log_ = nullptr;
  std::string last_line_;
  bool line_open_ = false;
  std::optional<std::chrono::steady_clock::time_point> last_plain_;
};

}  // namespace ks
