#include "core/resources.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace ks {
namespace fs = std::filesystem;

namespace {

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

Resources At(const fs::path& dir) {
  Resources r;
  r.dir = dir.lexically_normal().string();
  r.prompts_dir = (dir / "prompts").lexically_normal().string();
  if (IsDir(dir / "python" / "kernelsmith_worker")) {
    r.python_dir = (dir / "python").lexically_normal().string();
  }
  return r;
}

}  // namespace

Result<Resources> FindResourcesFor(const std::string& exe_path, const std::string& override_dir) {
  if (!override_dir.empty()) {
    if (IsDir(fs::path(override_dir) / "prompts")) return At(override_dir);
    return Status::NotFound(fmt::format(
        "KS_RESOURCE_DIR={} has no prompts/ directory; point it at a directory with prompts/ and "
        "python/ (a source checkout or <prefix>/share/kernelsmith) or unset it",
        override_dir));
  }
  fs::path bin_dir = fs::path(exe_path).parent_path();
  std::vector<fs::path> candidates = {bin_dir / ".." / "share" / "kernelsmith",
                                      bin_dir / "share" / "kernelsmith"};
  std::vector<std::string> tried;
  for (const fs::path& c : candidates) {
    if (IsDir(c / "prompts")) return At(c);
    tried.push_back((c / "prompts").lexically_normal().string());
  }
  return Status::NotFound(fmt::format(
      "kernelsmith's resources (prompt templates, Python worker) not found for the binary {}: "
      "looked for {}; reinstall kernelsmith (pip install kernelsmith, or cmake --install), or set "
      "KS_RESOURCE_DIR to a directory with prompts/ and python/ (e.g. a source checkout)",
      exe_path, fmt::join(tried, " and ")));
}

Result<Resources> FindResources() {
  static const Result<Resources> found = [] {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
      return Result<Resources>(Status::IOError(
          "cannot read /proc/self/exe to find kernelsmith's resources: " + ec.message() +
          " (set KS_RESOURCE_DIR to a directory with prompts/ and python/)"));
    }
    const char* env = std::getenv("KS_RESOURCE_DIR");
    return FindResourcesFor(exe.string(), env != nullptr ? env : "");
  }();
  return found;
}

}  // namespace ks
