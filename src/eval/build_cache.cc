#include "eval/build_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace ks {
namespace {

using SysClock = std::chrono::system_clock;

struct Times {
  bool ok = false;
  bool has_birth = false;
  SysClock::time_point change;
  SysClock::time_point birth;
};

SysClock::time_point FromStatx(const struct statx_timestamp& t) {
  return SysClock::time_point(std::chrono::duration_cast<SysClock::duration>(
      std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec)));
}

Times TimesOf(const std::string& path) {
  Times t;
  struct statx stx {};
  if (statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_CTIME | STATX_BTIME, &stx) != 0) {
    return t;
  }
  t.ok = (stx.stx_mask & STATX_CTIME) != 0;
  t.change = FromStatx(stx.stx_ctime);
  // a file system without creation times may report zero
  t.has_birth = (stx.stx_mask & STATX_BTIME) != 0 && stx.stx_btime.tv_sec > 0;
  if (t.has_birth) t.birth = FromStatx(stx.stx_btime);
  return t;
}

}  // namespace

std::string CpuExtCacheRoot(const std::string& worker_ks_cache_dir) {
  std::string root = worker_ks_cache_dir;
  if (root.empty()) {
    const char* env = std::getenv("KS_CACHE_DIR");
    if (env != nullptr && *env != '\0') root = env;
  }
  if (root.empty()) {
    const char* home = std::getenv("HOME");
    root = std::string(home != nullptr && *home != '\0' ? home : "/tmp") + "/.cache/kernelsmith";
  }
  return root + "/cpu_ext";
}

std::vector<std::string> RemoveReplacedBuilds(const std::string& root, SysClock::time_point since) {
  namespace fs = std::filesystem;
  std::vector<std::string> removed;
  std::error_code ec;
  fs::directory_iterator slots(root, ec);
  if (ec) return removed;
  for (const fs::directory_entry& slot : slots) {
    std::error_code sec;
    if (!slot.is_directory(sec) || slot.is_symlink(sec)) continue;
    const Times dir = TimesOf(slot.path().string());
    if (!dir.ok) continue;
    const bool fresh_slot = dir.has_birth && dir.birth >= since;  // a first build, made now
    if (fresh_slot) continue;
    fs::directory_iterator files(slot.path(), sec);
    if (sec) continue;
    for (const fs::directory_entry& file : files) {
      const std::string path = file.path().string();
      if (file.path().extension() != ".so") continue;
      const Times t = TimesOf(path);
      if (!t.ok || t.change < since) continue;
      std::error_code rec;
      if (fs::remove(file.path(), rec) && !rec) removed.push_back(path);
    }
  }
  return removed;
}

}  // namespace ks
