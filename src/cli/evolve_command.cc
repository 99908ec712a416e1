#include "cli/evolve_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/eval_runner_setup.h"
#include "cli/evolve_setup.h"
#include "cli/final_verify.h"
#include "cli/python_choice.h"
#include "cli/run_flags.h"
#include "core/config_file.h"
#include "run/run_setup.h"
#include "task/task.h"
#include "usage/llm_usage.h"

namespace ks {
namespace {

constexpr int kExitFound = 0;
constexpr int kExitNotFound = 1;
constexpr int kExitWaiting = 3;

int UsageError(const std::string& message) { return EvolveUsageError(message); }

}  // namespace

CLI::App* AddEvolveCommand(CLI::App& app, EvolveCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "evolve",
      "Evolve a faster kernel for a KernelBench-format problem: propose candidates (LLM, "
      "tuner, a command or files), evaluate each, keep the best in a run directory (run.db, "
      "best.py, summary.json, run.log).\nExit status: 0 a correct candidate was found, 1 none "
      "was, 2 usage or input error, 3 waiting for answers (--proposer files; then --resume).");
  cmd->add_option("problem", o.problem_path,
                  "Problem file (class Model, get_inputs, ...); with --resume it may be left out: "
                  "the run goes on with the problem stored in its run.db (a warning says when "
                  "this file differs from it)");
  cmd->add_option("--seed-kernel", o.run.seed_kernel,
                  "Seed candidate (class ModelNew with an EVOLVE-BLOCK); without one the LLM "
                  "translates the reference first");
  cmd->add_option("--run-dir", o.run_dir, "Run directory (default: runs/<problem>-<time>)");
  cmd->add_flag("--resume", o.resume, "Continue the run in --run-dir from its run.db");
  AddRunFlags(cmd, o.run, o.config_path);
  cmd->add_flag("--no-verify", o.no_verify,
                "Do not re-measure the best kernel at the end (by default it is evaluated "
                "again in a fresh worker and timed by an independent method too, as "
                "`kernelsmith verify` does; the outcome goes to RUN_DIR/verify.json)")
      ->envname("KS_NO_VERIFY");
  return cmd;
}

int RunEvolveCommand(const EvolveCommandOptions& flags, const CLI::App& cmd) {
  EvolveCommandOptions e = flags;
  RunOptions& o = e.run;
  Result<SourceFile> problem = SourceFile{};
  if (!e.problem_path.empty()) {
    problem = LoadProblem(e.problem_path);
    if (!problem.ok()) return UsageError(problem.status().message());
  } else if (!e.resume) {
    return UsageError(
        "give the problem file: kernelsmith evolve PROBLEM.py (only --resume may leave it out)");
  }

  // Options: run.json of a resumed run, then --config, then flags.
  std::string run_id;
  if (e.resume) {
    if (e.run_dir.empty()) return UsageError("--resume needs --run-dir DIR of an earlier run");
    Result<nlohmann::json> run_json = ReadJsonFile(e.run_dir + "/run.json");
    if (!run_json.ok()) {
      return UsageError("cannot resume: " + run_json.status().message() +
                        " (is --run-dir the directory of an earlier evolve run?)");
    }
    run_id = run_json->value("run_id", std::string());
    Status s = ApplyConfigUnderFlags(run_json->value("config", nlohmann::json::object()), cmd,
                                     e.run_dir + "/run.json", o);
    if (!s.ok()) return UsageError(s.message());
  }
  if (!e.config_path.empty()) {
    Result<nlohmann::json> config = ReadConfigFile(e.config_path);
    if (!config.ok()) return UsageError(config.status().message());
    Status s = ApplyConfigUnderFlags(*config, cmd, e.config_path, o);
    if (!s.ok()) return UsageError(s.message());
  }
  Result<ProposerSpec> spec = ProposerSpecOf(o);
  if (!spec.ok()) return UsageError(spec.status().message());
  // A resumed run goes on with the seed stored in its run.db (OpenRun): the file named at its
  // start may be gone.
  Result<SourceFile> seed = e.resume ? Result<SourceFile>(SourceFile{}) : LoadSeedFor(o);
  if (!seed.ok()) return UsageError(seed.status().message());

  if (e.run_dir.empty()) e.run_dir = DefaultRunDir(e.problem_path);
  if (!e.resume) {
    run_id = std::filesystem::path(e.run_dir).filename().string();
    if (run_id.empty()) run_id = "run";
  }
  RunTarget target{*problem, *seed, e.run_dir, run_id, e.resume};
  if (!e.resume && std::filesystem::exists(e.run_dir + "/run.db")) {
    return UsageError(e.run_dir +
                      " already holds a run; add --resume to continue it, or choose "
                      "another --run-dir");
  }

  EvalRunnerSpec runner_spec;  // a local pool, or the cluster with --queue
  runner_spec.queue = o.queue;
  runner_spec.python = o.python;
  Result<std::vector<int>> gpus = GpusFor(o.gpus, o.backend);
  if (!gpus.ok()) return UsageError(gpus.status().message());
  runner_spec.gpus = *gpus;
  runner_spec.slots_per_gpu = SlotsPerGpuFor(o.parallel_evals, gpus->size());
  runner_spec.who = "kernelsmith evolve";
  Result<EvalRunnerSetup> setup = StartEvalRunner(runner_spec);
  if (!setup.ok()) return UsageError(setup.status().message());
  const nlohmann::json* hello = &setup->hello;
  Result<std::string> backend = ResolveBackend(o.backend, *hello);
  if (!backend.ok()) return UsageError(backend.status().message());
  o.backend = *backend;

  Result<OpenedRun> run = OpenRun(o, target);
  if (!run.ok()) return UsageError(run.status().message());
  RunShared shared;
  shared.runner = setup->runner.get();
  shared.hardware = HardwareOf(*hello);
  Result<RunOutcome> outcome = Status::Ok();
  {
    Progress progress(stdout, isatty(fileno(stdout)) != 0, e.run_dir + "/run.log");
    outcome = RunEvolution(o, *spec, target, *run, shared, &progress);
    progress.Finish();
  }
  setup->runner->Shutdown();
  if (!outcome.ok()) {
    fmt::print(stderr, "kernelsmith evolve: error: {}\n", outcome.status().message());
    // A problem or setup the run cannot use is an input error (2); anything else ended it (1).
    return outcome.status().code() == Status::Code::kInvalidArgument ? 2 : kExitNotFound;
  }
  const nlohmann::json& s = outcome->summary;
  if (LlmUsage usage = LlmUsage::FromJson(s.value("llm", nlohmann::json())); usage.calls > 0) {
    fmt::print("{}\n", FormatUsage(usage, {o.price_in, o.price_out}));
  }
  if (outcome->waiting_answers > 0) {
    fmt::print(
        "waiting for {} answers in {}: answer the .prompt.md files in .answer.md files, then "
        "run the same command with --resume\n",
        outcome->waiting_answers, o.exchange_dir);
    return kExitWaiting;
  }
  if (s["best_speedup"].is_number()) {
    fmt::print(
        "best speedup: {:.3f}x ({}; seed {})\nbest kernel:  {}/best.py\nsummary:      "
        "{}/summary.json\n",
        s["best_speedup"].get<double>(), s["best_program_id"].get<std::string>(),
        s["seed_speedup"].is_number() ? fmt::format("{:.3f}x", s["seed_speedup"].get<double>())
                                      : std::string("not correct"),
        e.run_dir, e.run_dir);
    if (e.no_verify) {
      fmt::print("re-measure:   kernelsmith verify {}\n", e.run_dir);
      return kExitFound;
    }
    std::fflush(stdout);
    FinalVerifyInput in;
    in.python = o.python;
    in.backend = o.backend;
    in.run_dir = e.run_dir;
    FinalVerify v = VerifyRunBest(in);
    switch (v.state) {
      case FinalVerify::State::kVerified:
        fmt::print("re-measured in a fresh worker ({}/verify.json):\n{}", e.run_dir,
                   FormatVerify(*v.outcome));
        break;
      case FinalVerify::State::kNotVerified:
        fmt::print("not re-measured: {} (`kernelsmith verify {}` re-measures it anyway)\n",
                   v.reason, e.run_dir);
        break;
      case FinalVerify::State::kFailed:
        fmt::print(stderr,
                   "kernelsmith evolve: re-measuring the best kernel failed: {} (the run is "
                   "stored; try `kernelsmith verify {}`)\n",
                   v.reason, e.run_dir);
        break;
    }
    return kExitFound;
  }
  if (s.value("best_program_id", std::string()) != "") {
    fmt::print("best kernel:  {}/best.py ({}: correct, not timed, so no speedup)\n", e.run_dir,
               s["best_program_id"].get<std::string>());
    return kExitFound;
  }
  fmt::print("no correct candidate found in {} round(s); see {}/run.log and {}/summary.json\n",
             o.rounds, e.run_dir, e.run_dir);
  return kExitNotFound;
}

}  // namespace ks
