#include "cli/evolve_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "cli/eval_runner_setup.h"
#include "cli/evolve_setup.h"
#include "cli/final_verify.h"
#include "cli/python_choice.h"
#include "core/config_file.h"
#include "core/file.h"
#include "engine/engine.h"
#include "engine/proposer_factory.h"
#include "propose/tuner.h"
#include "store/sqlite_store.h"
#include "task/task.h"

namespace ks {
namespace {

constexpr int kExitFound = 0;
constexpr int kExitNotFound = 1;
constexpr int kExitWaiting = 3;

int UsageError(const std::string& message) { return EvolveUsageError(message); }

// The run's status could not be stored: say so (a later --resume or --summary-only would
// otherwise show a stale state). Returns whether it was stored.
bool ReportStatusWrite(const Status& s, const std::string& run_dir) {
  if (s.ok()) return true;
  fmt::print(stderr, "kernelsmith evolve: error: cannot store the run's status in {}/run.db: {}\n",
             run_dir, s.message());
  return false;
}

// The options that live in config files and run.json, by key (flag name without dashes,
// '-' as '_').
using ConfigField = std::variant<std::string*, int*, double*, uint64_t*, std::vector<std::string>*>;
std::vector<std::pair<std::string, ConfigField>> ConfigFields(EvolveCommandOptions& o) {
  return {{"seed_kernel", &o.seed_kernel},
          {"backend", &o.backend},
          {"proposer", &o.proposer},
          {"rounds", &o.rounds},
          {"islands", &o.islands},
          {"parallel_proposals", &o.parallel_proposals},
          {"parallel_evals", &o.parallel_evals},
          {"llm_url", &o.llm_url},
          {"model", &o.model},
          {"api_key_env", &o.api_key_env},
          {"llm", &o.llms},
          {"command", &o.command},
          {"command_timeout", &o.command_timeout_s},
          {"exchange_dir", &o.exchange_dir},
          {"prompts", &o.prompts_dir},
          {"migration_interval", &o.migration_interval},
          {"exploitation", &o.exploitation},
          {"exploration", &o.exploration},
          {"random", &o.random},
          {"tuner_ratio", &o.tuner_ratio},
          {"seed", &o.seed},
          {"trials", &o.trials},
          {"python", &o.python},
          {"queue", &o.queue},
          {"max_tokens", &o.llm_limits.max_tokens},
          {"context_tokens", &o.llm_limits.context_tokens},
          {"llm_timeout", &o.llm_limits.llm_timeout_s}};
}

nlohmann::json ConfigOf(EvolveCommandOptions o) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, field] : ConfigFields(o)) {
    std::visit([&, k = key](auto* value) { j[k] = *value; }, field);
  }
  return j;
}

// Sets the options named in `config` whose flag was not given on the command line.
Status ApplyConfig(const nlohmann::json& config, const CLI::App& cmd, const std::string& source,
                   EvolveCommandOptions& o) {
  if (!config.is_object()) return Status::InvalidArgument(source + ": expected a JSON object");
  std::vector<std::pair<std::string, ConfigField>> fields = ConfigFields(o);
  std::vector<std::string> known;
  for (const auto& field : fields) known.push_back(field.first);
  if (Status s = CheckConfigKeys(config, known, source); !s.ok()) return s;
  for (const auto& [key, value] : config.items()) {
    auto field = std::find_if(fields.begin(), fields.end(),
                              [&, k = key](const auto& f) { return f.first == k; });
    if (field == fields.end()) {
      return Status::InvalidArgument(
          fmt::format("{}: unknown key \"{}\" (known: {})", source, key, ConfigOf(o).dump()));
    }
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (cmd.count(flag) > 0) continue;  // flags win
    try {
      std::visit([&](auto* target) { value.get_to(*target); }, field->second);
    } catch (const nlohmann::json::exception& e) {
      return Status::InvalidArgument(source + ": \"" + key + "\" has the wrong type: " + e.what());
    }
  }
  return Status::Ok();
}

}  // namespace

CLI::App* AddEvolveCommand(CLI::App& app, EvolveCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "evolve",
      "Evolve a faster kernel for a KernelBench-format problem: propose candidates (LLM, "
      "tuner, a command or files), evaluate each, keep the best in a run directory (run.db, "
      "best.py, summary.json, run.log).\nExit status: 0 a correct candidate was found, 1 none "
      "was, 2 usage or input error, 3 waiting for answers (--proposer files; then --resume).");
  cmd->add_option("problem", o.problem_path, "Problem file (class Model, get_inputs, ...)")
      ->required();
  cmd->add_option("--seed-kernel", o.seed_kernel,
                  "Seed candidate (class ModelNew with an EVOLVE-BLOCK); without one the LLM "
                  "translates the reference first");
  cmd->add_option("--backend", o.backend, "triton | cuda | cpu (default: triton with a GPU)")
      ->check(CLI::IsMember({"triton", "cuda", "cpu"}));
  cmd->add_option("--proposer", o.proposer,
                  "llm | tuner | command | files (default: llm when an LLM is given, else tuner)")
      ->check(CLI::IsMember({"llm", "tuner", "command", "files"}));
  cmd->add_option("--rounds", o.rounds, "Rounds after the seed")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--run-dir", o.run_dir, "Run directory (default: runs/<problem>-<time>)");
  cmd->add_flag("--resume", o.resume, "Continue the run in --run-dir from its run.db");
  cmd->add_option(
      "--config", o.config_path,
      "YAML (.yaml/.yml) or JSON file of options (keys: flag names with '_' for '-'); flags win");
  cmd->add_option("--islands", o.islands, "Islands of the archive")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--parallel-proposals", o.parallel_proposals, "Proposals in flight")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--parallel-evals", o.parallel_evals, "Evaluation workers")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--llm-url", o.llm_url, "OpenAI-compatible base URL, e.g. http://host:8000/v1");
  cmd->add_option("--model", o.model, "Model name for --llm-url");
  cmd->add_option("--api-key-env", o.api_key_env, "Environment variable holding the API key");
  AddLlmLimitFlags(cmd, o.llm_limits);
  cmd->add_option("--llm", o.llms,
                  "URL,MODEL[,WEIGHT[,API_KEY_ENV]]: an ensemble member (repeatable; with "
                  "--llm-url/--model as one more member of weight 1)");
  cmd->add_option("--prompts", o.prompts_dir,
                  "Directory of prompt templates overriding prompts/ (DIR/<backend>/*.md)");
  cmd->add_option("--exchange-dir", o.exchange_dir,
                  "--proposer files: prompts go to DIR/*.prompt.md, answers are read from "
                  "DIR/*.answer.md");
  cmd->add_option("--migration-interval", o.migration_interval,
                  "Generations between ring migrations (0: none)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--exploitation", o.exploitation, "Parent sampling weight: elites")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--exploration", o.exploration, "Parent sampling weight: diverse cells")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--random", o.random, "Parent sampling weight: any program")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--tuner-ratio", o.tuner_ratio,
                  "Share of proposals made by the tuner between LLM/command/files proposals "
                  "(parents with tunable constants only)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--command", o.command,
                  "Proposer command (run by /bin/sh): prompt on stdin, completion on stdout");
  cmd->add_option("--command-timeout", o.command_timeout_s, "Seconds per --command call")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the search and of the evaluations")
      ->capture_default_str();
  cmd->add_option("--trials", o.trials, "Correctness trials per candidate")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--python", o.python, "Python with torch for the workers");
  cmd->add_option("--queue", o.queue,
                  "Evaluate on cluster workers through Redis: redis://HOST:PORT[/DB]"
                  "[?device=KIND] (docs/cluster.md; config key: queue)");
  cmd->add_flag("--no-verify", o.no_verify,
                "Do not re-measure the best kernel at the end (by default it is evaluated "
                "again in a fresh worker and timed by an independent method too, as "
                "`kernelsmith verify` does; the outcome goes to RUN_DIR/verify.json)")
      ->envname("KS_NO_VERIFY");
  cmd->add_flag("--summary-only", o.summary_only,
                "Print the stored summary and per-status counts of --run-dir, then exit")
      ->group("");  // hidden: used by tests
  return cmd;
}

int RunEvolveCommand(const EvolveCommandOptions& flags, const CLI::App& cmd) {
  EvolveCommandOptions o = flags;
  if (o.summary_only) {
    if (o.run_dir.empty()) return UsageError("--summary-only needs --run-dir");
    return PrintStoredSummary(o.run_dir);
  }
  Result<SourceFile> problem = LoadProblem(o.problem_path);
  if (!problem.ok()) return UsageError(problem.status().message());

  // Options: run.json of a resumed run, then --config, then flags.
  std::string run_id;
  if (o.resume) {
    if (o.run_dir.empty()) return UsageError("--resume needs --run-dir DIR of an earlier run");
    Result<nlohmann::json> run_json = ReadJsonFile(o.run_dir + "/run.json");
    if (!run_json.ok()) {
      return UsageError("cannot resume: " + run_json.status().message() +
                        " (is --run-dir the directory of an earlier evolve run?)");
    }
    run_id = run_json->value("run_id", std::string());
    Status s = ApplyConfig(run_json->value("config", nlohmann::json::object()), cmd,
                           o.run_dir + "/run.json", o);
    if (!s.ok()) return UsageError(s.message());
  }
  if (!o.config_path.empty()) {
    Result<nlohmann::json> config = ReadConfigFile(o.config_path);
    if (!config.ok()) return UsageError(config.status().message());
    Status s = ApplyConfig(*config, cmd, o.config_path, o);
    if (!s.ok()) return UsageError(s.message());
  }
  if (o.proposer.empty()) {
    o.proposer = !o.llm_url.empty() || !o.llms.empty() ? "llm"
                 : !o.command.empty()                  ? "command"
                 : !o.exchange_dir.empty()             ? "files"
                                                       : "tuner";
  }
  ProposerSpec spec;
  spec.kind = o.proposer;
  if (!o.llm_url.empty() || !o.model.empty()) {
    if (o.llm_url.empty() || o.model.empty()) {
      return UsageError("--llm-url and --model go together (or use --llm URL,MODEL)");
    }
    spec.llms.push_back({o.llm_url, o.model, 1.0, o.api_key_env});
  }
  for (const std::string& text : o.llms) {
    Result<LlmEndpointSpec> e = ParseLlmEndpointSpec(text);
    if (!e.ok()) return UsageError(e.status().message());
    spec.llms.push_back(*e);
  }
  spec.max_in_flight = o.parallel_proposals;
  spec.command = o.command;
  spec.command_timeout_s = o.command_timeout_s;
  spec.exchange_dir = o.exchange_dir;
  spec.prompts_dir = o.prompts_dir;
  spec.tuner_ratio = o.proposer == "tuner" ? 0 : o.tuner_ratio;
  spec.seed = o.seed;
  spec.limits = o.llm_limits;
  SourceFile seed;
  if (!o.seed_kernel.empty()) {
    Result<SourceFile> loaded = LoadCandidate(o.seed_kernel);
    if (!loaded.ok()) return UsageError(loaded.status().message());
    seed = *loaded;
  }
  if (o.proposer == "tuner") {
    if (seed.source.empty()) {
      return UsageError(
          "the tuner proposer needs a seed kernel with tunable constants: give --seed-kernel "
          "SEED.py (mark ranges with `# ks:tune NAME=[v1, v2, ...]` inside its EVOLVE-BLOCK), "
          "or configure an LLM with --llm-url URL --model NAME to translate the reference");
    }
    Result<std::vector<TunableParam>> tunables = ScanTunables(seed.source);
    if (!tunables.ok()) return UsageError(seed.path + ": " + tunables.status().message());
    if (tunables->empty()) {
      return UsageError(seed.path +
                        ": no tunable constants in the EVOLVE-BLOCK for the tuner; add "
                        "`# ks:tune NAME=[v1, v2, ...]` comments");
    }
  }
  if (o.proposer == "llm" && spec.llms.empty()) {
    return UsageError("--proposer llm needs --llm-url URL --model NAME (or --llm URL,MODEL)");
  }
  if (o.proposer == "command" && o.command.empty()) {
    return UsageError("--proposer command needs --command 'CMD'");
  }
  if (o.proposer == "files" && o.exchange_dir.empty()) {
    return UsageError("--proposer files needs --exchange-dir DIR");
  }

  if (o.run_dir.empty()) o.run_dir = DefaultRunDir(o.problem_path);
  std::error_code ec;
  std::filesystem::create_directories(o.run_dir, ec);
  if (ec) return UsageError("cannot create run directory " + o.run_dir + ": " + ec.message());
  if (!o.resume && std::filesystem::exists(o.run_dir + "/run.db")) {
    return UsageError(o.run_dir +
                      " already holds a run; add --resume to continue it, or choose "
                      "another --run-dir");
  }
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(o.run_dir + "/run.db");
  if (!store.ok()) return UsageError(store.status().message());

  EvalRunnerSpec runner_spec;
  runner_spec.queue = o.queue;
  runner_spec.python = o.python;
  runner_spec.slots_per_gpu = o.parallel_evals;
  runner_spec.who = "kernelsmith evolve";
  Result<EvalRunnerSetup> setup = StartEvalRunner(runner_spec);
  if (!setup.ok()) return UsageError(setup.status().message());
  const nlohmann::json* hello = &setup->hello;
  Result<std::string> backend = ResolveBackend(o.backend, *hello);
  if (!backend.ok()) return UsageError(backend.status().message());
  o.backend = *backend;

  if (!o.resume) {
    run_id = std::filesystem::path(o.run_dir).filename().string();
    if (run_id.empty()) run_id = "run";
    nlohmann::json run_json = {{"run_id", run_id}, {"config", ConfigOf(o)}};
    Status s = WriteFileAtomic(o.run_dir + "/run.json", run_json.dump(2) + "\n");
    if (!s.ok()) return UsageError(s.message());
    RunRecord run;
    run.id = run_id;
    run.config = ConfigOf(o);
    run.problem_path = problem->path;
    run.problem_sha256 = problem->sha256;
    run.problem_source = problem->source;
    run.backend = o.backend;
    s = (*store)->CreateRun(run);
    if (!s.ok()) return UsageError(s.message());
  } else {
    Result<RunRecord> run = (*store)->GetRun(run_id);
    if (!run.ok()) return UsageError(run.status().message());
    if (run->problem_sha256 != problem->sha256) {
      return UsageError(problem->path + " differs from the problem this run was started on (" +
                        run->problem_path + "); resume with the same problem file");
    }
    if (!ReportStatusWrite((*store)->UpdateRunStatus(run_id, RunStatus::kRunning), o.run_dir)) {
      return kExitNotFound;
    }
  }

  spec.run_id = run_id;
  Result<std::unique_ptr<Proposer>> proposer = MakeProposer(spec, store->get());
  if (!proposer.ok()) return UsageError(proposer.status().message());

  EngineOptions eo;
  eo.run_id = run_id;
  eo.problem_path = problem->path;
  eo.problem_source = problem->source;
  eo.seed_path = seed.path;
  eo.seed_source = seed.source;
  eo.backend = o.backend;
  eo.hardware = HardwareOf(*hello);
  eo.rounds = o.rounds;
  eo.parallel_proposals = o.parallel_proposals;
  eo.trials = o.trials;
  eo.seed = o.seed;
  eo.archive.num_islands = o.islands;
  eo.archive.seed = o.seed;
  eo.archive.migration_interval = o.migration_interval;
  eo.archive.exploitation_ratio = o.exploitation;
  eo.archive.exploration_ratio = o.exploration;
  eo.archive.random_ratio = o.random;
  if (Status v = eo.archive.Validate(); !v.ok()) return UsageError(v.message());
  eo.run_dir = o.run_dir;
  Progress progress(stdout, isatty(fileno(stdout)) != 0, o.run_dir + "/run.log");
  progress.Log(fmt::format("{} {}: {} proposer, backend {}, {} rounds, {} island(s), run dir {}",
                           o.resume ? "resuming" : "starting", run_id, o.proposer, o.backend,
                           o.rounds, o.islands, o.run_dir));
  Engine engine(eo, store->get(), setup->runner.get(), proposer->get(), &progress);
  Result<nlohmann::json> summary = engine.Run();
  setup->runner->Shutdown();
  progress.Finish();
  if (!summary.ok()) {
    ReportStatusWrite((*store)->UpdateRunStatus(run_id, RunStatus::kFailed), o.run_dir);
    fmt::print(stderr, "kernelsmith evolve: error: {}\n", summary.status().message());
    // A problem or setup the run cannot use is an input error (2); anything else ended it (1).
    return summary.status().code() == Status::Code::kInvalidArgument ? 2 : kExitNotFound;
  }
  const nlohmann::json& s = *summary;
  if (int waiting = s.value("waiting_answers", 0); waiting > 0) {
    if (!ReportStatusWrite((*store)->UpdateRunStatus(run_id, RunStatus::kWaiting), o.run_dir)) {
      return kExitNotFound;
    }
    fmt::print(
        "waiting for {} answers in {}: answer the .prompt.md files in .answer.md files, then "
        "run the same command with --resume\n",
        waiting, o.exchange_dir);
    return kExitWaiting;
  }
  if (!ReportStatusWrite((*store)->UpdateRunStatus(run_id, RunStatus::kFinished), o.run_dir)) {
    return kExitNotFound;
  }
  if (s["best_speedup"].is_number()) {
    fmt::print(
        "best speedup: {:.3f}x ({}; seed {})\nbest kernel:  {}/best.py\nsummary:      "
        "{}/summary.json\n",
        s["best_speedup"].get<double>(), s["best_program_id"].get<std::string>(),
        s["seed_speedup"].is_number() ? fmt::format("{:.3f}x", s["seed_speedup"].get<double>())
                                      : std::string("not correct"),
        o.run_dir, o.run_dir);
    if (o.no_verify) {
      fmt::print("re-measure:   kernelsmith verify {}\n", o.run_dir);
      return kExitFound;
    }
    std::fflush(stdout);
    FinalVerifyInput in{o.python,
                        o.backend,
                        problem->path,
                        problem->source,
                        o.run_dir,
                        s["best_program_id"].get<std::string>(),
                        s["best_speedup"].get<double>()};
    Result<VerifyOutcome> v = VerifyRunBest(in);
    if (!v.ok()) {
      fmt::print(stderr,
                 "kernelsmith evolve: re-measuring the best kernel failed: {} (the run is "
                 "stored; try `kernelsmith verify {}`)\n",
                 v.status().message(), o.run_dir);
    } else {
      fmt::print("re-measured in a fresh worker ({}/verify.json):\n{}", o.run_dir,
                 FormatVerify(*v));
    }
    return kExitFound;
  }
  if (s.value("best_program_id", std::string()) != "") {
    fmt::print("best kernel:  {}/best.py ({}: correct, not timed, so no speedup)\n", o.run_dir,
               s["best_program_id"].get<std::string>());
    return kExitFound;
  }
  fmt::print("no correct candidate found in {} round(s); see {}/run.log and {}/summary.json\n",
             o.rounds, o.run_dir, o.run_dir);
  return kExitNotFound;
}

}  // namespace ks
