#include "curate/curate_progress.h"

#include <fmt/format.h>

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

CurateProgress::CurateProgress(std::FILE* out, bool tty, const std::string& log_path,
                               double plain_interval_s)
    : out_(out), tty_(tty), plain_interval_s_(plain_interval_s) {
  if (!log_path.empty()) log_ = std::fopen(log_path.c_str(), "a");
}

CurateProgress::~CurateProgress() {
  Finish();
  if (log_ != nullptr) std::fclose(log_);
}

void CurateProgress::Log(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tty_ && line_open_) fmt::print(out_, "\r\033[K");
  fmt::print(out_, "{}\n", line);
  if (tty_ && line_open_) fmt::print(out_, "{}", last_);
  std::fflush(out_);
  if (log_ != nullptr) {
    fmt::print(log_, "{} {}\n", Timestamp(), line);
    std::fflush(log_);
  }
}

void CurateProgress::Status(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (line == last_) return;
  last_ = line;
  if (tty_) {
    fmt::print(out_, "\r\033[K{}", line);
    line_open_ = true;
    std::fflush(out_);
    return;
  }
  auto now = std::chrono::steady_clock::now();
  if (now - last_plain_ < std::chrono::duration<double>(plain_interval_s_)) return;
  last_plain_ = now;
  fmt::print(out_, "{}\n", line);
  std::fflush(out_);
  if (log_ != nullptr) {
    fmt::print(log_, "{} {}\n", Timestamp(), line);
    std::fflush(log_);
  }
}

void CurateProgress::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (tty_ && line_open_) {
    fmt::print(out_, "\n");
    std::fflush(out_);
  }
  line_open_ = false;
}

}  // namespace ks
