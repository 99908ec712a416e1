#include "cli/evolve_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>

#include "core/file.h"
#include "engine/engine.h"
#include "engine/llm_proposer.h"
#include "eval/worker_pool.h"
#include "llm/llm_client.h"
#include "propose/tuner.h"
#include "store/sqlite_store.h"
#include "task/task.h"

namespace ks {
namespace {

constexpr int kExitFound = 0;
constexpr int kExitNotFound = 1;
constexpr int kExitUsage = 2;

int UsageError(const std::string& message) {
  fmt::print(stderr, "kernelsmith evolve: error: {}\n", message);
  return kExitUsage;
}

// The options that live in config files and run.json, by key (flag name without dashes,
// '-' as '_').
nlohmann::json ConfigOf(const EvolveCommandOptions& o) {
  return {{"seed_kernel", o.seed_kernel},
          {"backend", o.backend},
          {"proposer", o.proposer},
          {"rounds", o.rounds},
          {"islands", o.islands},
          {"parallel_proposals", o.parallel_proposals},
          {"parallel_evals", o.parallel_evals},
          {"llm_url", o.llm_url},
          {"model", o.model},
          {"api_key_env", o.api_key_env},
          {"command", o.command},
          {"command_timeout", o.command_timeout_s},
          {"seed", o.seed},
          {"trials", o.trials},
          {"python", o.python}};
}

// Sets the options named in `config` whose flag was not given on the command line.
Status ApplyConfig(const nlohmann::json& config, const CLI::App& cmd, const std::string& source,
                   EvolveCommandOptions& o) {
  if (!config.is_object()) return Status::InvalidArgument(source + ": expected a JSON object");
  nlohmann::json known = ConfigOf(o);
  try {
    for (const auto& [key, value] : config.items()) {
      if (!known.contains(key)) {
        return Status::InvalidArgument(
            fmt::format("{}: unknown key \"{}\" (known: {})", source, key, known.dump()));
      }
      std::string flag = "--" + key;
      for (char& c : flag) c = c == '_' ? '-' : c;
      if (cmd.count(flag) > 0) continue;  // flags win
      known[key] = value;
    }
    o.seed_kernel = known["seed_kernel"].get<std::string>();
    o.backend = known["backend"].get<std::string>();
    o.proposer = known["proposer"].get<std::string>();
    o.rounds = known["rounds"].get<int>();
    o.islands = known["islands"].get<int>();
    o.parallel_proposals = known["parallel_proposals"].get<int>();
    o.parallel_evals = known["parallel_evals"].get<int>();
    o.llm_url = known["llm_url"].get<std::string>();
    o.model = known["model"].get<std::string>();
    o.api_key_env = known["api_key_env"].get<std::string>();
    o.command = known["command"].get<std::string>();
    o.command_timeout_s = known["command_timeout"].get<double>();
    o.seed = known["seed"].get<uint64_t>();
    o.trials = known["trials"].get<int>();
    o.python = known["python"].get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(source + ": a value has the wrong type: " + e.what());
  }
  return Status::Ok();
}

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": not valid JSON");
  return j;
}

std::string DefaultRunDir(const std::string& problem_path) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  return fmt::format("runs/{}-{}", std::filesystem::path(problem_path).stem().string(), stamp);
}

Result<std::string> ResolveBackend(const std::string& requested, const nlohmann::json& hello) {
  bool cuda = hello.value("cuda_available", false);
  bool interpret = hello.value("triton_interpret", false);
  if (requested.empty()) return std::string(cuda ? "triton" : "cpu");
  if (requested == "triton" && !cuda && !interpret) {
    return Status::InvalidArgument(
        "--backend triton needs a CUDA GPU, and the worker sees none. Use --backend cpu.");
  }
  if (requested == "cuda" && !cuda) {
    return Status::InvalidArgument("--backend cuda needs a CUDA GPU. Use --backend cpu.");
  }
  return requested;
}

}  // namespace

CLI::App* AddEvolveCommand(CLI::App& app, EvolveCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "evolve",
      "Evolve a faster kernel for a KernelBench-format problem: propose candidates (LLM, "
      "tuner or a command), evaluate each, keep the best in a run directory (run.db, best.py, "
      "summary.json, run.log).\nExit status: 0 a correct candidate was found, 1 none was, 2 "
      "usage or input error.");
  cmd->add_option("problem", o.problem_path, "Problem file (class Model, get_inputs, ...)")
      ->required();
  cmd->add_option("--seed-kernel", o.seed_kernel,
                  "Seed candidate (class ModelNew with an EVOLVE-BLOCK); without one the LLM "
                  "translates the reference first");
  cmd->add_option("--backend", o.backend, "triton | cuda | cpu (default: triton with a GPU)")
      ->check(CLI::IsMember({"triton", "cuda", "cpu"}));
  cmd->add_option("--proposer", o.proposer,
                  "llm | tuner | command (default: llm when --llm-url is given, else tuner)")
      ->check(CLI::IsMember({"llm", "tuner", "command"}));
  cmd->add_option("--rounds", o.rounds, "Rounds after the seed")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--run-dir", o.run_dir, "Run directory (default: runs/<problem>-<time>)");
  cmd->add_flag("--resume", o.resume, "Continue the run in --run-dir from its run.db");
  cmd->add_option("--config", o.config_path,
                  "JSON file of options (keys: flag names with '_' for '-'); flags win");
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
  cmd->add_flag("--summary-only", o.summary_only,
                "Print the stored summary and per-status counts of --run-dir, then exit")
      ->group("");  // hidden: used by tests
  return cmd;
}

namespace {

int PrintStoredSummary(const std::string& run_dir) {
  Result<nlohmann::json> run_json = ReadJsonFile(run_dir + "/run.json");
  if (!run_json.ok()) return UsageError(run_json.status().message());
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(run_dir + "/run.db");
  if (!store.ok()) return UsageError(store.status().message());
  std::string run_id = run_json->value("run_id", std::string());
  Result<RunRecord> run = (*store)->GetRun(run_id);
  if (!run.ok()) return UsageError(run.status().message());
  Result<std::vector<ProgramRecord>> pending = (*store)->PendingPrograms(run_id);
  Result<std::vector<ProgramRecord>> programs = (*store)->ProgramsOfRun(run_id);
  nlohmann::json out = run->summary;
  out["status"] = RunStatusName(run->status);
  out["programs"] = programs.ok() ? programs->size() : 0;
  out["pending"] = pending.ok() ? pending->size() : 0;
  fmt::print("{}\n", out.dump(2));
  return kExitFound;
}

}  // namespace

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
    Result<nlohmann::json> config = ReadJsonFile(o.config_path);
    if (!config.ok()) return UsageError(config.status().message());
    Status s = ApplyConfig(*config, cmd, o.config_path, o);
    if (!s.ok()) return UsageError(s.message());
  }
  if (o.proposer.empty()) {
    o.proposer = !o.llm_url.empty() ? "llm" : !o.command.empty() ? "command" : "tuner";
  }
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
  if (o.proposer == "llm" && (o.llm_url.empty() || o.model.empty())) {
    return UsageError("--proposer llm needs --llm-url URL and --model NAME");
  }
  if (o.proposer == "command" && o.command.empty()) {
    return UsageError("--proposer command needs --command 'CMD'");
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

  WorkerPoolOptions pool_options;
  if (!o.python.empty()) {
    pool_options.python = o.python;
  } else if (const char* env = std::getenv("KS_PYTHON"); env != nullptr && *env != '\0') {
    pool_options.python = env;
  }
  pool_options.slots_per_gpu = o.parallel_evals;
  Result<std::unique_ptr<WorkerPool>> pool = WorkerPool::Create(pool_options);
  if (!pool.ok()) return UsageError(pool.status().message());
  Result<nlohmann::json> hello = (*pool)->Hello();
  if (!hello.ok()) {
    return UsageError("the evaluation worker did not start: " + hello.status().message());
  }
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
    (void)(*store)->UpdateRunStatus(run_id, RunStatus::kRunning);
  }

  std::unique_ptr<Proposer> proposer;
  if (o.proposer == "tuner") {
    proposer = std::make_unique<TunerProposer>(o.seed);
  } else {
    std::shared_ptr<LlmClient> client;
    LlmProposerOptions lo;
    lo.run_id = run_id;
    if (o.proposer == "llm") {
      OpenAiClientOptions co;
      co.base_url = o.llm_url;
      co.model = o.model;
      co.api_key_env = o.api_key_env;
      co.max_in_flight = o.parallel_proposals;
      co.seed = o.seed;
      Result<std::unique_ptr<OpenAiClient>> c = OpenAiClient::Create(co);
      if (!c.ok()) return UsageError(c.status().message());
      client = std::move(*c);
      lo.model = o.model;
    } else {
      client = MakeCommandClient(o.command, o.command_timeout_s);
      lo.model = "command";
      lo.kind = ProposerKind::kCommand;
    }
    proposer = std::make_unique<LlmProposer>(client, store->get(), lo);
  }

  EngineOptions eo;
  eo.run_id = run_id;
  eo.problem_path = problem->path;
  eo.problem_source = problem->source;
  eo.seed_path = seed.path;
  eo.seed_source = seed.source;
  eo.backend = o.backend;
  eo.rounds = o.rounds;
  eo.parallel_proposals = o.parallel_proposals;
  eo.trials = o.trials;
  eo.seed = o.seed;
  eo.archive.num_islands = o.islands;
  eo.archive.seed = o.seed;
  eo.archive.migration_interval = 5;
  eo.run_dir = o.run_dir;
  Progress progress(stdout, isatty(fileno(stdout)) != 0, o.run_dir + "/run.log");
  progress.Log(fmt::format("{} {}: {} proposer, backend {}, {} rounds, {} island(s), run dir {}",
                           o.resume ? "resuming" : "starting", run_id, o.proposer, o.backend,
                           o.rounds, o.islands, o.run_dir));
  Engine engine(eo, store->get(), pool->get(), proposer.get(), &progress);
  Result<nlohmann::json> summary = engine.Run();
  (*pool)->Shutdown();
  progress.Finish();
  if (!summary.ok()) {
    (void)(*store)->UpdateRunStatus(run_id, RunStatus::kFailed);
    fmt::print(stderr, "kernelsmith evolve: error: {}\n", summary.status().message());
    return kExitNotFound;
  }
  (void)(*store)->UpdateRunStatus(run_id, RunStatus::kFinished);
  const nlohmann::json& s = *summary;
  if (s["best_speedup"].is_number()) {
    fmt::print(
        "best speedup: {:.3f}x ({}; seed {})\nbest kernel:  {}/best.py\nsummary:      "
        "{}/summary.json\n",
        s["best_speedup"].get<double>(), s["best_program_id"].get<std::string>(),
        s["seed_speedup"].is_number() ? fmt::format("{:.3f}x", s["seed_speedup"].get<double>())
                                      : std::string("not correct"),
        o.run_dir, o.run_dir);
    return kExitFound;
  }
  fmt::print("no correct candidate found in {} round(s); see {}/run.log and {}/summary.json\n",
             o.rounds, o.run_dir, o.run_dir);
  return kExitNotFound;
}

}  // namespace ks
