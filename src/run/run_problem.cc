#include "run/run_problem.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/file.h"
#include "core/sha256.h"

namespace ks {

Result<RunProblem> ProblemOfRun(const RunRecord& run, const std::string& disk_path) {
  const std::string path = disk_path.empty() ? run.problem_path : disk_path;
  std::error_code ec;
  const bool on_disk = !path.empty() && std::filesystem::is_regular_file(path, ec);
  RunProblem out;
  if (!run.problem_source.empty()) {
    out.problem = SourceFile{run.problem_path, run.problem_source, run.problem_sha256};
    out.stored = true;
    if (on_disk) {
      Result<std::string> text = ReadFile(path);
      if (text.ok() && *text != run.problem_source) {
        out.warning = fmt::format(
            "{} differs from the problem run '{}' was made for (sha256 {} on disk, {} stored in "
            "run.db); using the stored problem",
            path, run.id, Sha256Hex(*text).substr(0, 12), run.problem_sha256.substr(0, 12));
      }
    }
    return out;
  }
  if (!on_disk) {
    return Status::NotFound(fmt::format(
        "run '{}' was made before kernelsmith stored problem sources in run.db and its problem "
        "{} is not found from here: pass the problem file (or run from the directory the run "
        "was started in)",
        run.id, path.empty() ? "(no path recorded)" : path));
  }
  Result<SourceFile> file = LoadProblem(path);
  if (!file.ok()) return file.status();
  if (file->sha256 != run.problem_sha256) {
    return Status::InvalidArgument(fmt::format(
        "{} differs from the problem run '{}' was made for (sha256 {}, the run's {}) and the "
        "run has no stored copy: pass the problem file the run was made with",
        path, run.id, file->sha256.substr(0, 12), run.problem_sha256.substr(0, 12)));
  }
  out.problem = std::move(*file);
  return out;
}

}  // namespace ks
