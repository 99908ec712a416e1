#include "engine/progress.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace ks {
namespace {

std::string Timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string FormatProgress(const ProgressState& s) {
  std::string line = fmt::format("round {}/{}  best {}  evals {}", s.round, s.rounds,
                                 s.best_speedup ? fmt::format("{:.3f}x", *s.best_speedup) : "-",
                                 s.evaluations_done);
  if (s.evaluations_in_flight > 0) line += fmt::format(" (+{} running)", s.evaluations_in_flight);
  if (s.proposals_in_flight > 0) {
    line += fmt::format("  proposals {} in flight", s.proposals_in_flight);
  }
  if (!s.failures.empty()) {
    line += "  failures:";
    for (const auto& [kind, n] : s.failures) line += fmt::format(" {} {}", kind, n);
  }
  return line;
}

Progress::Progress(std::FILE* out, bool tty, const std::string& log_path, double plain_interval_s)
    : out_(out), tty_(tty), plain_interval_s_(plain_interval_s) {
  if (!log_path.empty()) log_ = std::fopen(log_path.c_str(), "a");
}

Progress::~Progress() {
  Finish();
  if (log_ != nullptr) std::fclose(log_);
}

void Progress::Log(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tty_ && line_open_) fmt::print(out_, "\r\033[K");
  fmt::print(out_, "{}\n", line);
  if (tty_ && line_open_) fmt::print(out_, "{}", last_line_);
  std::fflush(out_);
  if (log_ != nullptr) {
    fmt::print(log_, "{} {}\n", Timestamp(), line);
    std::fflush(log_);
  }
}

void Progress::Update(const ProgressState& state) { Status(FormatProgress(state)); }

void Progress::Status(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (line == last_line_) return;
  last_line_ = line;
  if (tty_) {
    fmt::print(out_, "\r\033[K{}", line);
    line_open_ = true;
    std::fflush(out_);
  }
  auto now = std::chrono::steady_clock::now();
  if (last_plain_ && now - *last_plain_ < std::chrono::duration<double>(plain_interval_s_)) return;
  last_plain_ = now;
  if (!tty_) {
    fmt::print(out_, "{}\n", line);
    std::fflush(out_);
  }
  if (log_ != nullptr) {
    fmt::print(log_, "{} {}\n", Timestamp(), line);
    std::fflush(log_);
  }
}

void Progress::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (tty_ && line_open_) {
    fmt::print(out_, "\n");
    std::fflush(out_);
  }
  line_open_ = false;
}

}  // namespace ks
