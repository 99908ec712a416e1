#include "cli/bench_command.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "bench/metrics.h"
#include "bench/problem_run.h"
#include "bench/suite.h"
#include "cli/backend_choice.h"
#include "cli/eval_runner_setup.h"
#include "cli/evolve_setup.h"
#include "cli/python_choice.h"
#include "core/file.h"
#include "engine/llm_proposer.h"
#include "engine/proposer_factory.h"
#include "llm/llm_client.h"

namespace ks {
namespace {

constexpr int kExitDone = 0;
constexpr int kExitIncomplete = 1;
constexpr int kExitUsage = 2;

int UsageError(const std::string& message) {
  fmt::print(stderr, "kernelsmith bench: error: {}\n", message);
  return kExitUsage;
}

nlohmann::json ProtocolToJson(const BenchProtocol& p) {
  return {{"backend", p.backend},      {"proposer", p.proposer},
          {"model", p.model},          {"rounds", p.rounds},
          {"islands", p.islands},      {"parallel_proposals", p.parallel_proposals},
          {"trials", p.trials},        {"seed", p.seed},
          {"max_tokens", p.max_tokens}};
}

Status ProtocolFromJson(const nlohmann::json& j, BenchProtocol& p) {
  try {
    p.backend = j.at("backend").get<std::string>();
    p.proposer = j.at("proposer").get<std::string>();
    p.model = j.at("model").get<std::string>();
    p.rounds = j.at("rounds").get<int>();
    p.islands = j.at("islands").get<int>();
    p.parallel_proposals = j.at("parallel_proposals").get<int>();
    p.trials = j.at("trials").get<int>();
    p.seed = j.at("seed").get<uint64_t>();
    p.max_tokens = j.value("max_tokens", p.max_tokens);  // absent in benches of older versions
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("bench_config.json: bad protocol: ") + e.what());
  }
  return Status::Ok();
}

nlohmann::json BenchJson(const std::string& suite_dir, const BenchProtocol& protocol,
                         const nlohmann::json& device, const std::vector<BenchProblemRow>& rows) {
  std::vector<ProblemOutcome> outcomes;
  nlohmann::json problems = nlohmann::json::array();
  for (const BenchProblemRow& r : rows) {
    if (r.status.empty()) continue;  // not run yet
    outcomes.push_back(r.outcome);
    problems.push_back(r.ToJson());
  }
  BenchMetrics m = ComputeBenchMetrics(outcomes);
  nlohmann::json levels = nlohmann::json::object();
  nlohmann::json series = {{"overall", m.overall.series}, {"levels", nlohmann::json::object()}};
  for (const auto& [level, g] : m.levels) {
    levels[std::to_string(level)] = GroupMetricsToJson(g);
    series["levels"][std::to_string(level)] = g.series;
  }
  return {{"schema_version", 1},
          {"kernelsmith_version", KS_VERSION},
          {"suite", suite_dir},
          {"protocol", ProtocolToJson(protocol)},
          {"device", device},
          {"levels", levels},
          {"overall", GroupMetricsToJson(m.overall)},
          {"series", series},
          {"problems", problems}};
}

std::string Speedup(const std::optional<double>& v) {
  return v ? fmt::format("{:.3f}x", *v) : std::string("none correct");
}

// A resumed bench runs the problems it was started with: the stored --levels and
// --problems apply where the command line leaves them out; a different value is refused.
Status KeepStoredFilters(const nlohmann::json& stored, BenchCommandOptions* o) {
  for (auto [key, flag, value] : {std::tuple{"levels", "--levels", &o->levels},
                                  std::tuple{"problems", "--problems", &o->problems_glob}}) {
    const std::string before = stored.value(key, std::string());
    if (value->empty()) {
      *value = before;
    } else if (*value != before) {
      return Status::InvalidArgument(
          fmt::format("cannot resume with {} '{}': this bench was started with '{}'; leave {} "
                      "out to keep it",
                      flag, *value, before, flag));
    }
  }
  return Status::Ok();
}

}  // namespace

CLI::App* AddBenchCommand(CLI::App& app, BenchCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Run one evolve per problem of a suite (KernelBench format, levelN/ folders) under one "
      "protocol; print corr, fast_p, avg_amsr and geomean speedup per level and overall, and "
      "write RUN_DIR/bench.json.\nExit status: 0 every attempted problem ran to the end, 1 some "
      "did not, 2 usage or input error.");
  cmd->add_option("suite", o.suite_dir, "Suite directory (levelN/<id>_<Name>.py ...)")->required();
  cmd->add_option("--levels", o.levels, "Levels to run, e.g. 1,2 (default: all)");
  cmd->add_option("--problems", o.problems_glob,
                  "Glob on the problem's stem, file name or levelN/stem (e.g. '1*_*')");
  cmd->add_option("--rounds", o.rounds, "Rounds after the seed, per problem")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--concurrency", o.concurrency, "Problems run at once")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--run-dir", o.run_dir, "Bench directory (default: runs/bench-<time>)");
  cmd->add_flag("--resume", o.resume,
                "Continue the bench in --run-dir: finished problems are kept, others resumed");
  cmd->add_option("--backend", o.backend, "triton | cuda | cpu (default: triton with a GPU)")
      ->check(CLI::IsMember({"triton", "cuda", "cpu"}));
  cmd->add_option("--proposer", o.proposer,
                  "llm | tuner | command (default: llm when --llm-url is given, else tuner)")
      ->check(CLI::IsMember({"llm", "tuner", "command"}));
  cmd->add_option("--islands", o.islands, "Islands per problem")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--parallel-proposals", o.parallel_proposals, "Proposals in flight per problem")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--parallel-evals", o.parallel_evals,
                  "Evaluation workers shared by all problems (default: --concurrency)")
      ->check(CLI::Range(0, 64));
  cmd->add_option("--llm-url", o.llm_url, "OpenAI-compatible base URL, e.g. http://host:8000/v1");
  cmd->add_option("--model", o.model, "Model name for --llm-url");
  cmd->add_option("--api-key-env", o.api_key_env, "Environment variable holding the API key");
  AddLlmLimitFlags(cmd, o.llm_limits);
  cmd->add_option("--llm-in-flight", o.llm_in_flight,
                  "LLM requests in flight over all problems together")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--command", o.command,
                  "Proposer command (run by /bin/sh): prompt on stdin, completion on stdout");
  cmd->add_option("--command-timeout", o.command_timeout_s, "Seconds per --command call")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the searches and evaluations")->capture_default_str();
  cmd->add_option("--trials", o.trials, "Correctness trials per candidate")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--python", o.python, "Python with torch for the workers");
  cmd->add_option("--queue", o.queue,
                  "Evaluate on cluster workers through Redis: redis://HOST:PORT[/DB]"
                  "[?device=KIND] (docs/cluster.md)");
  return cmd;
}

int RunBenchCommand(const BenchCommandOptions& o_in, const CLI::App& /*cmd*/) {
  BenchCommandOptions o = o_in;  // a resumed bench takes its suite filters from the run
  BenchProtocol protocol;
  protocol.proposer = !o.proposer.empty()  ? o.proposer
                      : !o.llm_url.empty() ? "llm"
                      : !o.command.empty() ? "command"
                                           : "tuner";
  protocol.model = protocol.proposer == "llm" ? o.model : "";
  protocol.rounds = o.rounds;
  protocol.islands = o.islands;
  protocol.parallel_proposals = o.parallel_proposals;
  protocol.trials = o.trials;
  protocol.seed = o.seed;
  protocol.max_tokens = o.llm_limits.max_tokens;
  std::string run_dir = o.run_dir.empty() ? StampedRunDir("bench") : o.run_dir;
  const std::string config_path = run_dir + "/bench_config.json";
  bool resumed_protocol = false;
  if (o.resume) {
    if (o.run_dir.empty()) return UsageError("--resume needs --run-dir DIR of an earlier bench");
    Result<std::string> text = ReadFile(config_path);
    if (!text.ok()) {
      return UsageError("cannot resume: " + text.status().message() +
                        " (is --run-dir the directory of an earlier bench?)");
    }
    nlohmann::json stored = nlohmann::json::parse(*text, nullptr, false);
    if (stored.is_discarded()) return UsageError(config_path + ": not valid JSON");
    Status s = ProtocolFromJson(stored.value("protocol", nlohmann::json::object()), protocol);
    if (!s.ok()) return UsageError(s.message());
    resumed_protocol = true;  // the stored protocol wins: every problem runs under the same one
    s = KeepStoredFilters(stored, &o);
    if (!s.ok()) return UsageError(s.message());
  } else if (std::filesystem::exists(config_path)) {
    return UsageError(run_dir +
                      " already holds a bench; add --resume to continue it, or choose another "
                      "--run-dir");
  }
  SuiteFilter filter;
  if (!o.levels.empty()) {
    Result<std::set<int>> levels = ParseLevels(o.levels);
    if (!levels.ok()) return UsageError(levels.status().message());
    filter.levels = *levels;
  }
  filter.glob = o.problems_glob;
  Result<std::vector<SuiteProblem>> problems = DiscoverSuite(o.suite_dir, filter);
  if (!problems.ok()) return UsageError(problems.status().message());
  if (problems->empty()) {
    return UsageError(o.suite_dir + ": no problem matches (check --levels and --problems)");
  }
  if (protocol.proposer == "llm" && (o.llm_url.empty() || protocol.model.empty())) {
    return UsageError("--proposer llm needs --llm-url URL and --model NAME");
  }
  if (protocol.proposer == "command" && o.command.empty()) {
    return UsageError("--proposer command needs --command 'CMD'");
  }

  EvalRunnerSpec runner_spec;
  runner_spec.queue = o.queue;
  runner_spec.python = o.python;
  runner_spec.slots_per_gpu = o.parallel_evals > 0 ? o.parallel_evals : o.concurrency;
  runner_spec.who = "kernelsmith bench";
  Result<EvalRunnerSetup> setup = StartEvalRunner(runner_spec);
  if (!setup.ok()) return UsageError(setup.status().message());
  const nlohmann::json* hello = &setup->hello;
  if (!resumed_protocol) {
    Result<std::string> backend = ResolveBackend(o.backend, *hello);
    if (!backend.ok()) return UsageError(backend.status().message());
    protocol.backend = *backend;
  }

  BenchShared shared;
  shared.runner = setup->runner.get();
  shared.hardware = HardwareOf(*hello);
  if (protocol.proposer == "llm") {
    ProposerSpec spec;  // the client evolve builds: dead-endpoint guard, context fitting
    spec.llms.push_back({o.llm_url, protocol.model, 1.0, o.api_key_env});
    spec.max_in_flight = o.llm_in_flight;
    spec.seed = protocol.seed;
    spec.limits = o.llm_limits;
    Result<std::shared_ptr<LlmClient>> client = MakeLlmClient(spec);
    if (!client.ok()) return UsageError(client.status().message());
    shared.llm_client = std::move(*client);
  } else if (protocol.proposer == "command") {
    shared.llm_client = MakeCommandClient(o.command, o.command_timeout_s);
  }

  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec) return UsageError("cannot create " + run_dir + ": " + ec.message());
  nlohmann::json device = hello->value("device", nlohmann::json(nullptr));
  if (device.is_null()) device = *hello;
  nlohmann::json config = {{"suite", o.suite_dir},
                           {"levels", o.levels},
                           {"problems", o.problems_glob},
                           {"protocol", ProtocolToJson(protocol)}};
  if (!resumed_protocol) {
    Status s = WriteFileAtomic(config_path, config.dump(2) + "\n");
    if (!s.ok()) return UsageError(s.message());
  }
  fmt::print(
      "{} bench of {} problem(s) from {}: {} proposer, backend {}, {} round(s), "
      "{} at once, run dir {}\n",
      o.resume ? "resuming" : "starting", problems->size(), o.suite_dir, protocol.proposer,
      protocol.backend, protocol.rounds, o.concurrency, run_dir);
  std::fflush(stdout);

  std::vector<BenchProblemRow> rows(problems->size());
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards output, bench.json and `done`
  size_t done = 0;
  auto work = [&]() {
    for (size_t i = next++; i < problems->size(); i = next++) {
      const SuiteProblem& p = (*problems)[i];
      std::string dir = run_dir + "/problems/" + p.level_dir + "/" + p.stem;
      BenchProblemRow row = RunBenchProblem(p, dir, protocol, shared);
      std::lock_guard<std::mutex> lock(mu);
      rows[i] = std::move(row);
      const BenchProblemRow& r = rows[i];
      ++done;
      fmt::print("[{}/{}] {}: {}{}\n", done, problems->size(), p.name,
                 r.status == "skipped" || r.status == "failed"
                     ? r.status + ": " + r.reason
                     : fmt::format("{}, best {}", r.status, Speedup(r.outcome.best_speedup)),
                 r.reused ? " (finished earlier)" : "");
      std::fflush(stdout);
      Status s = WriteFileAtomic(run_dir + "/bench.json",
                                 BenchJson(o.suite_dir, protocol, device, rows).dump(2) + "\n");
      if (!s.ok()) fmt::print(stderr, "kernelsmith bench: {}\n", s.message());
    }
  };
  std::vector<std::thread> threads;
  size_t n = std::min<size_t>(static_cast<size_t>(o.concurrency), problems->size());
  for (size_t t = 0; t < n; ++t) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  setup->runner->Shutdown();

  std::vector<ProblemOutcome> outcomes;
  bool complete = true;
  for (const BenchProblemRow& r : rows) {
    outcomes.push_back(r.outcome);
    if (r.status == "failed" || r.status == "unfinished") complete = false;
  }
  fmt::print("\n{}", FormatMetricsTable(ComputeBenchMetrics(outcomes)));
  fmt::print("bench:  {}/bench.json\n", run_dir);
  return complete ? kExitDone : kExitIncomplete;
}

}  // namespace ks
