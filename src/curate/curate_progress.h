// Progress of `kernelsmith curate`: one overwritten status line on a terminal, plain lines
// otherwise (at most one status line every `plain_interval_s`), and every line appended to a
// log file (OUT_DIR/curate.log).
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

namespace ks {

class CurateProgress {
 public:
  // `log_path` empty: no log. `tty`: overwrite one line on `out`.
  CurateProgress(std::FILE* out, bool tty, const std::string& log_path,
                 double plain_interval_s = 5.0);
  ~CurateProgress();
  CurateProgress(const CurateProgress&) = delete;
  CurateProgress& operator=(const CurateProgress&) = delete;

  // A notable event (stage start/end, a warning): always printed and logged.
  void Log(const std::string& line);
  // The current status line, e.g. "extract 120/400 files  modules 530".
  void Status(const std::string& line);
  // Ends an open status line.
  void Finish();

 private:
  std::mutex mu_;
  std::FILE* out_;
  const bool tty_;
  const double plain_interval_s_;
  std::FILE* log_ = nullptr;
  std::string last_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point last_plain_{};
};

}  // namespace ks
