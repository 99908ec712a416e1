#include "cli/eval_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "cli/one_off_pool.h"
#include "cli/eval_report.h"
#include "eval/feedback.h"
#include "task/task.h"

namespace ks {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

int UsageError(const std::string& message) {
  fmt::print(stderr, "kernelsmith eval: error: {}\n", message);
  return kExitUsage;
}

}  // namespace

CLI::App* AddEvalCommand(CLI::App& app, EvalCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "Evaluate a candidate kernel against a KernelBench-format problem: compile, check "
      "correctness over several seeded trials, audit for hacks, and time it against the "
      "PyTorch reference.\nExit status: 0 correct and not hacked, 1 evaluated and failed, "
      "2 usage or input error.");
  cmd->add_option("problem", o.problem_path,
                  "Problem file: class Model(nn.Module), get_inputs(), get_init_inputs()")
      ->required();
  cmd->add_option("candidate", o.candidate_path,
                  "Candidate file: class ModelNew with Model's constructor and forward")
      ->required();
  cmd->add_option("--backend", o.backend,
                  "triton | cuda | cpu (default: triton when a CUDA GPU is visible, else cpu)")
      ->check(CLI::IsMember({"triton", "cuda", "cpu"}));
  cmd->add_option("--gpu", o.gpu, "Run the worker on this GPU index (CUDA_VISIBLE_DEVICES)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--trials", o.trials, "Correctness trials, each with a fresh seed")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--tolerance", o.tolerance, "default (atol=rtol=1e-2) | strict (1e-4)")
      ->check(CLI::IsMember({"default", "strict"}))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Base seed for inputs and parameters")->capture_default_str();
  cmd->add_flag("--json", o.json, "Print the EvalResult as JSON (docs/eval-result.md)");
  cmd->add_option("--repeat", o.repeat,
                  "Evaluate N times in one warm worker (to see the measurement noise); one "
                  "report or JSON line each")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_flag("!--no-timing", o.timing, "Skip the timing stage (correctness and audit only)");
  cmd->add_option("--baseline", o.baseline_path,
                  "Time the candidate against this other candidate (a file with ModelNew, e.g. "
                  "your current best) instead of the reference, interleaved in one worker; "
                  "prints the speedup over it")
      ->check(CLI::ExistingFile);
  cmd->add_option("--python", o.python,
                  "Python interpreter with torch for the worker (default: $KS_PYTHON or python3)");
  return cmd;
}

int RunEvalCommand(const EvalCommandOptions& o) {
  Result<SourceFile> problem = LoadProblem(o.problem_path);
  if (!problem.ok()) return UsageError(problem.status().message());
  Result<SourceFile> candidate = LoadCandidate(o.candidate_path);
  if (!candidate.ok()) return UsageError(candidate.status().message());
  std::optional<SourceFile> baseline;
  if (!o.baseline_path.empty()) {
    if (!o.timing) return UsageError("--baseline only changes what is timed: drop --no-timing");
    Result<SourceFile> b = LoadCandidate(o.baseline_path);
    if (!b.ok()) return UsageError("--baseline: " + b.status().message());
    baseline = *b;
  }

  Result<OneOffPool> started = StartOneOffPool(o.python, o.gpu, o.backend);
  if (!started.ok()) return UsageError(started.status().message());
  std::unique_ptr<WorkerPool>& pool = started->pool;
  const std::string& backend = started->backend;

  EvalRequest request;
  request.problem_path = problem->path;
  request.problem_source = problem->source;
  request.candidate_path = candidate->path;
  request.candidate_source = candidate->source;
  request.backend = backend;
  request.trials = o.trials;
  request.tolerance = o.tolerance;
  request.seed = o.seed;
  request.timing = o.timing;
  if (baseline) {
    request.baseline_path = baseline->path;
    request.baseline_source = baseline->source;
  }

  int exit_code = kExitOk;
  for (int i = 0; i < o.repeat; ++i) {
    EvalResult result = pool->Evaluate(request);
    if (o.json) {
      fmt::print("{}\n", result.ToJson().dump());
    } else {
      if (o.repeat > 1) fmt::print("--- evaluation {}/{}\n", i + 1, o.repeat);
      fmt::print("{}", FormatEvalReport(result));
    }
    std::fflush(stdout);
    if (result.status == EvalStatus::kInfraError) {
      exit_code = kExitUsage;
    } else if (result.status != EvalStatus::kOk && exit_code == kExitOk) {
      exit_code = kExitFailed;
    }
  }
  pool->Shutdown();
  return exit_code;
}

}  // namespace ks
