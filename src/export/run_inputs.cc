#include "export/run_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "store/sqlite_store.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

// run.db files below `dir` (at most `max_depth` levels down), sorted.
std::vector<std::string> RunDatabasesBelow(const fs::path& dir, int max_depth) {
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= max_depth) it.disable_recursion_pending();
    if (it->path().filename() == "run.db" && it->is_regular_file(ec)) {
      found.push_back(it->path().string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

Result<std::vector<std::string>> FindRunDatabases(const std::vector<std::string>& paths) {
  std::vector<std::string> dbs;
  for (const std::string& path : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
      return Status::NotFound(fmt::format(
          "{}: no such run directory (pass the --run-dir of `kernelsmith evolve` or "
          "`kernelsmith bench`)",
          path));
    }
    if (fs::is_regular_file(st)) {
      dbs.push_back(path);
      continue;
    }
    fs::path dir(path);
    if (fs::is_regular_file(dir / "run.db", ec)) {
      dbs.push_back((dir / "run.db").string());
      continue;
    }
    std::vector<std::string> below = RunDatabasesBelow(dir, 4);
    if (below.empty()) {
      return Status::InvalidArgument(fmt::format(
          "{}: not a run directory: it holds no run.db (an evolve run directory has run.db, a "
          "bench directory problems/levelN/<stem>/run.db)",
          path));
    }
    dbs.insert(dbs.end(), below.begin(), below.end());
  }
  return dbs;
}

Result<std::vector<Trajectory>> LoadTrajectories(const std::vector<std::string>& paths) {
  Result<std::vector<std::string>> dbs = FindRunDatabases(paths);
  if (!dbs.ok()) return dbs.status();
  std::vector<Trajectory> out;
  for (const std::string& db : *dbs) {
    SqliteStoreOptions options;
    options.read_only = true;
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(db, options);
    if (!store.ok()) return store.status();
    Result<std::vector<RunRecord>> runs = (*store)->ListRuns();
    if (!runs.ok()) return runs.status();
    const fs::path parent = fs::path(db).parent_path();
    const std::string run_dir = parent.empty() ? fs::path(".").string() : parent.string();
    for (const RunRecord& run : *runs) {
      Result<Trajectory> t = LoadTrajectory(**store, run, run_dir);
      if (!t.ok()) return t.status();
      out.push_back(std::move(*t));
    }
  }
  return out;
}

}  // namespace ks
