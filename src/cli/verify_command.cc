#include "cli/verify_command.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <memory>

#include "cli/evolve_setup.h"
#include "cli/one_off_pool.h"
#include "cli/run_dir.h"
#include "core/file.h"
#include "core/json_fields.h"
#include "run/run_problem.h"
#include "task/task.h"
#include "verify/verify.h"

namespace ks {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

int UsageError(const std::string& message) {
  fmt::print(stderr, "kernelsmith verify: error: {}\n", message);
  return kExitUsage;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// What to verify: problem, candidate and (from a run) its backend and recorded figure.
struct Target {
  std::string problem_path;
  std::string candidate_path;
  std::optional<RunRecord> run;  // the stored run (its problem's source, when kept)
  std::string backend;
  std::optional<double> recorded;  // the run's best speedup
};

Result<Target> TargetOfRun(const std::string& run_dir) {
  Result<StoredRun> opened = ReadRunDir(run_dir);
  if (!opened.ok()) return opened.status();
  RunRecord& run = opened->run;
  Target t;
  t.problem_path = run.problem_path;
  t.candidate_path = run_dir + "/best.py";
  t.backend = run.backend;
  t.recorded = JsonNumber(run.summary, "best_speedup");
  t.run = std::move(run);
  if (!FileExists(t.candidate_path)) {
    return Status::InvalidArgument(run_dir + " has no best.py (no correct candidate yet)");
  }
  return t;
}

// The problem to verify against: a run's (the source stored in run.db, with a warning on
// stderr when the file at its path has changed since), else the PROBLEM.py given.
Result<SourceFile> ProblemOf(const Target& t) {
  if (!t.run) return LoadProblem(t.problem_path);
  Result<RunProblem> problem = ProblemOfRun(*t.run);
  if (!problem.ok()) {
    return Status::InvalidArgument(problem.status().message() + "; or verify PROBLEM.py " +
                                   t.candidate_path);
  }
  if (!problem->warning.empty()) {
    fmt::print(stderr, "kernelsmith verify: warning: {}\n", problem->warning);
  }
  return problem->problem;
}

}  // namespace

CLI::App* AddVerifyCommand(CLI::App& app, VerifyCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Re-evaluate a kernel before you ship it: a run's best.py (RUN_DIR) or CANDIDATE.py "
      "against PROBLEM.py, in a fresh worker, timed by the evaluator's method and by an "
      "independent one (do_bench_cudagraph on a GPU, a wall-clock loop on the CPU); prints "
      "both figures and whether they agree.\nExit status: 0 correct and agreeing, 1 not "
      "correct or the figures differ, 2 usage or input error.");
  cmd->add_option("target", o.target, "RUN_DIR, or PROBLEM.py followed by CANDIDATE.py")
      ->required();
  cmd->add_option("candidate", o.candidate_path, "CANDIDATE.py (with PROBLEM.py)");
  cmd->add_option("--backend", o.backend,
                  "triton | cuda | cpu (default: the run's, else triton on a GPU, else cpu)")
      ->check(CLI::IsMember({"triton", "cuda", "cpu"}));
  cmd->add_flag("--json", o.json, "Print the outcome as one JSON object");
  cmd->add_option("--python", o.python,
                  "Python interpreter with torch for the worker (default: $KS_PYTHON or python3)");
  return cmd;
}

int RunVerifyCommand(const VerifyCommandOptions& o) {
  Target target;
  if (IsDirectory(o.target)) {
    if (!o.candidate_path.empty()) {
      return UsageError("give a run directory alone, or PROBLEM.py and CANDIDATE.py");
    }
    Result<Target> t = TargetOfRun(o.target);
    if (!t.ok()) return UsageError(t.status().message());
    target = *t;
  } else {
    if (o.candidate_path.empty()) {
      return UsageError(o.target +
                        " is not a run directory: give RUN_DIR, or PROBLEM.py and "
                        "CANDIDATE.py");
    }
    target.problem_path = o.target;
    target.candidate_path = o.candidate_path;
  }
  if (!o.backend.empty()) target.backend = o.backend;
  Result<SourceFile> problem = ProblemOf(target);
  if (!problem.ok()) return UsageError(problem.status().message());
  Result<SourceFile> candidate = LoadCandidate(target.candidate_path);
  if (!candidate.ok()) return UsageError(candidate.status().message());

  Result<OneOffPool> started = StartOneOffPool(o.python, std::nullopt, target.backend);
  if (!started.ok()) return UsageError(started.status().message());
  std::unique_ptr<WorkerPool>& pool = started->pool;
  const std::string& backend = started->backend;

  EvalRequest request;
  request.problem_path = problem->path;
  request.problem_source = problem->source;
  request.candidate_path = candidate->path;
  request.candidate_source = candidate->source;
  request.backend = backend;
  VerifyOutcome v = Verify(pool.get(), std::move(request));
  pool->Shutdown();
  if (v.result.status == EvalStatus::kInfraError) {
    return UsageError("the evaluation could not run: " + v.result.message);
  }
  if (o.json) {
    fmt::print("{}\n", VerifyRecord(v, target.candidate_path, target.recorded).dump());
  } else {
    fmt::print("verify       {} against {} ({})\n", target.candidate_path, target.problem_path,
               backend);
    if (target.recorded) fmt::print("recorded     {:.3f}x (the run's best)\n", *target.recorded);
    fmt::print("{}", FormatVerify(v));
  }
  return v.ok() ? kExitOk : kExitFailed;
}

}  // namespace ks
