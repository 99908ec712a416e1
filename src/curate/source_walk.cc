#include "curate/source_walk.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace ks {
namespace {

namespace fs = std::filesystem;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool SkipDirectory(const fs::path& dir, const SourceWalkOptions& o) {
  static const std::set<std::string> kSkipped = {"__pycache__", "node_modules", "build", "dist",
                                                 "venv", "site-packages"};
  std::string name = dir.filename().string();
  if (name.empty() || name[0] == '.' || kSkipped.count(name) > 0) return true;
  if (EndsWith(name, ".egg-info") || EndsWith(name, ".dist-info")) return true;
  if (o.skip_tests && (name == "test" || name == "tests" || name == "testing")) return true;
  std::error_code ec;
  return fs::exists(dir / "pyvenv.cfg", ec);
}

bool SkipFile(const std::string& name, const SourceWalkOptions& o) {
  if (!EndsWith(name, ".py") || name[0] == '.') return true;
  if (!o.skip_tests) return false;
  return name == "conftest.py" || name.rfind("test_", 0) == 0 || EndsWith(name, "_test.py");
}

}  // namespace

Result<std::vector<CurateSourceFile>> WalkSources(const std::vector<std::string>& roots,
                                                  const SourceWalkOptions& options) {
  std::vector<CurateSourceFile> out;
  for (size_t i = 0; i < roots.size(); ++i) {
    std::error_code ec;
    fs::path root = fs::absolute(roots[i], ec).lexically_normal();
    if (!root.empty() && root.filename().empty()) root = root.parent_path();  // trailing '/'
    if (ec || !fs::is_directory(root, ec)) {
      return Status::NotFound(roots[i] +
                              ": not a directory (give curate directories of Python source: "
                              "repositories or installed packages)");
    }
    std::vector<CurateSourceFile> files;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    if (ec) return Status::IOError("cannot list " + root.string() + ": " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) return Status::IOError("cannot list below " + root.string() + ": " + ec.message());
      const fs::directory_entry& e = *it;
      std::error_code type_ec;
      if (e.is_symlink(type_ec)) {
        if (e.is_directory(type_ec)) it.disable_recursion_pending();
        continue;
      }
      if (e.is_directory(type_ec)) {
        if (SkipDirectory(e.path(), options)) it.disable_recursion_pending();
        continue;
      }
      if (!e.is_regular_file(type_ec) || SkipFile(e.path().filename().string(), options)) continue;
      if (e.file_size(type_ec) > options.max_file_bytes) continue;
      CurateSourceFile f;
      f.root_index = static_cast<int>(i);
      f.root = root.string();
      f.path = e.path().string();
      f.rel = e.path().lexically_relative(root).string();
      files.push_back(std::move(f));
    }
    std::sort(files.begin(), files.end(),
              [](const CurateSourceFile& a, const CurateSourceFile& b) { return a.rel < b.rel; });
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

}  // namespace ks
