#include "cli/bench_command.h"

#include <fmt/format.h>

#include <algorithm>
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
#include "cli/bench_verify.h"
#include "cli/eval_runner_setup.h"
#include "cli/evolve_setup.h"
#include "cli/python_choice.h"
#include "cli/run_flags.h"
#include "core/config_file.h"
#include "core/file.h"
#include "engine/llm_proposer.h"
#include "engine/proposer_factory.h"
#include "llm/llm_client.h"
#include "usage/llm_usage.h"
#include "verify/verify_cells.h"

namespace ks {
namespace {

constexpr int kExitDone = 0;
constexpr int kExitIncomplete = 1;
constexpr int kExitUsage = 2;
constexpr int kExitWaiting = 3;

int UsageError(const std::string& message) {
  fmt::print(stderr, "kernelsmith bench: error: {}\n", message);
  return kExitUsage;
}

// The options every problem runs under, as bench_config.json and bench.json record them (the
// seed kernel is each problem's own).
nlohmann::json ProtocolOf(const RunOptions& o) {
  nlohmann::json j = ConfigOf(o);
  j.erase("seed_kernel");
  return j;
}

// The LLM usage of every problem's run together.
LlmUsage BenchUsage(const std::vector<BenchProblemRow>& rows) {
  LlmUsage total;
  for (const BenchProblemRow& r : rows) {
    total.Add(LlmUsage::FromJson(r.summary.value("llm", nlohmann::json())));
  }
  return total;
}

nlohmann::json BenchJson(const std::string& suite_dir, const nlohmann::json& protocol,
                         const LlmPrices& prices, const nlohmann::json& device,
                         const std::vector<BenchProblemRow>& rows) {
  std::vector<ProblemOutcome> outcomes;
  nlohmann::json problems = nlohmann::json::array();
  for (const BenchProblemRow& r : rows) {
    if (r.status.empty()) continue;  // not run yet
    outcomes.push_back(r.outcome);
    problems.push_back(r.ToJson());
    // the problem's usage at the bench's prices (a reused run was summarized with its own)
    problems.back()["llm"] =
        LlmUsage::FromJson(r.summary.value("llm", nlohmann::json())).ToJson(prices);
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
          {"protocol", protocol},
          {"device", device},
          {"levels", levels},
          {"overall", GroupMetricsToJson(m.overall)},
          {"series", series},
          {"usage", BenchUsage(rows).ToJson(prices)},
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
      "write RUN_DIR/bench.json. Every evolve flag and config key applies to each problem.\n"
      "Exit status: 0 every attempted problem ran to the end, 1 some did not, 2 usage or input "
      "error, 3 waiting for answers (--proposer files; then --resume).");
  cmd->add_option("suite", o.suite_dir, "Suite directory (levelN/<id>_<Name>.py ...)")->required();
  cmd->add_option("--levels", o.levels, "Levels to run, e.g. 1,2 (default: all)");
  cmd->add_option("--problems", o.problems_glob,
                  "Glob on the problem's stem, file name or levelN/stem (e.g. '1*_*')");
  cmd->add_option("--concurrency", o.concurrency, "Problems run at once")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--run-dir", o.run_dir, "Bench directory (default: runs/bench-<time>)");
  cmd->add_flag("--resume", o.resume,
                "Continue the bench in --run-dir: finished problems are kept, others resumed");
  cmd->add_option("--llm-in-flight", o.llm_in_flight,
                  "LLM requests in flight over all problems together")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  AddRunFlags(cmd, o.run, o.config_path);
  cmd->add_flag("--no-verify", o.no_verify,
                "Do not re-measure the problems' best kernels at the end (by default each is "
                "evaluated again in a fresh worker and timed by an independent method too, as "
                "`evolve` does; the outcome goes to the problem's verify.json and bench.json)")
      ->envname("KS_NO_VERIFY");
  return cmd;
}

int RunBenchCommand(const BenchCommandOptions& flags, const CLI::App& cmd) {
  BenchCommandOptions b = flags;  // a resumed bench takes its options from the run
  RunOptions& o = b.run;
  std::string run_dir = b.run_dir.empty() ? StampedRunDir("bench") : b.run_dir;
  const std::string config_path = run_dir + "/bench_config.json";
  // Options: bench_config.json of a resumed bench, then --config, then flags.
  if (b.resume) {
    if (b.run_dir.empty()) return UsageError("--resume needs --run-dir DIR of an earlier bench");
    Result<nlohmann::json> stored = ReadJsonFile(config_path);
    if (!stored.ok()) {
      return UsageError("cannot resume: " + stored.status().message() +
                        " (is --run-dir the directory of an earlier bench?)");
    }
    if (!stored->contains("config")) {
      return UsageError(config_path +
                        " was written by an older kernelsmith (no \"config\"); start a new bench "
                        "in another --run-dir");
    }
    Status s = ApplyConfigUnderFlags((*stored)["config"], cmd, config_path, o);
    if (s.ok()) s = KeepStoredFilters(*stored, &b);
    if (!s.ok()) return UsageError(s.message());
    // the bench's own sharing, as it was started unless given again
    if (!FlagGiven(cmd, "--concurrency"))
      b.concurrency = stored->value("concurrency", b.concurrency);
    if (!FlagGiven(cmd, "--llm-in-flight")) {
      b.llm_in_flight = stored->value("llm_in_flight", b.llm_in_flight);
    }
  } else if (std::filesystem::exists(config_path)) {
    return UsageError(run_dir +
                      " already holds a bench; add --resume to continue it, or choose another "
                      "--run-dir");
  }
  if (!b.config_path.empty()) {
    Result<nlohmann::json> config = ReadConfigFile(b.config_path);
    if (!config.ok()) return UsageError(config.status().message());
    Status s = ApplyConfigUnderFlags(*config, cmd, b.config_path, o);
    if (!s.ok()) return UsageError(s.message());
  }
  if (!o.seed_kernel.empty()) {
    return UsageError(
        "seed_kernel: a bench takes each problem's seed from the suite "
        "(<stem>.<backend>.py beside the problem); remove the key");
  }
  Result<ProposerSpec> spec = ProposerSpecOf(o);
  if (!spec.ok()) return UsageError(spec.status().message());
  SuiteFilter filter;
  if (!b.levels.empty()) {
    Result<std::set<int>> levels = ParseLevels(b.levels);
    if (!levels.ok()) return UsageError(levels.status().message());
    filter.levels = *levels;
  }
  filter.glob = b.problems_glob;
  Result<std::vector<SuiteProblem>> problems = DiscoverSuite(b.suite_dir, filter);
  if (!problems.ok()) return UsageError(problems.status().message());
  if (problems->empty()) {
    return UsageError(b.suite_dir + ": no problem matches (check --levels and --problems)");
  }

  EvalRunnerSpec runner_spec;  // a local pool, or the cluster with --queue
  runner_spec.queue = o.queue;
  runner_spec.python = o.python;
  Result<std::vector<int>> gpus = GpusFor(o.gpus, o.backend);
  if (!gpus.ok()) return UsageError(gpus.status().message());
  runner_spec.gpus = *gpus;
  runner_spec.slots_per_gpu =
      SlotsPerGpuFor(o.parallel_evals > 0 ? o.parallel_evals : b.concurrency, gpus->size());
  runner_spec.who = "kernelsmith bench";
  Result<EvalRunnerSetup> setup = StartEvalRunner(runner_spec);
  if (!setup.ok()) return UsageError(setup.status().message());
  const nlohmann::json* hello = &setup->hello;
  Result<std::string> backend = ResolveBackend(o.backend, *hello);
  if (!backend.ok()) return UsageError(backend.status().message());
  o.backend = *backend;

  RunShared shared;  // one pool, and one LLM client whose in-flight bound spans the bench
  shared.runner = setup->runner.get();
  shared.hardware = HardwareOf(*hello);
  if (spec->kind == "llm") {
    ProposerSpec client_spec = *spec;
    client_spec.max_in_flight = b.llm_in_flight;
    Result<std::shared_ptr<LlmClient>> client = MakeLlmClient(client_spec);
    if (!client.ok()) return UsageError(client.status().message());
    shared.llm_client = std::move(*client);
  } else if (spec->kind == "command") {
    shared.llm_client = MakeCommandClient(o.command, o.command_timeout_s);
  }

  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec) return UsageError("cannot create " + run_dir + ": " + ec.message());
  nlohmann::json device = hello->value("device", nlohmann::json(nullptr));
  if (device.is_null()) device = *hello;
  const nlohmann::json protocol = ProtocolOf(o);
  const LlmPrices prices{o.price_in, o.price_out};
  if (!b.resume) {
    nlohmann::json config = {{"suite", b.suite_dir},
                             {"levels", b.levels},
                             {"problems", b.problems_glob},
                             {"concurrency", b.concurrency},
                             {"llm_in_flight", b.llm_in_flight},
                             {"config", protocol}};
    Status s = WriteFileAtomic(config_path, config.dump(2) + "\n");
    if (!s.ok()) return UsageError(s.message());
  }
  fmt::print(
      "{} bench of {} problem(s) from {}: {} proposer, backend {}, {} round(s), "
      "{} at once, run dir {}\n",
      b.resume ? "resuming" : "starting", problems->size(), b.suite_dir, o.proposer, o.backend,
      o.rounds, b.concurrency, run_dir);
  std::fflush(stdout);

  std::vector<BenchProblemRow> rows(problems->size());
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards output, bench.json and `done`
  size_t done = 0;
  auto work = [&]() {
    for (size_t i = next++; i < problems->size(); i = next++) {
      const SuiteProblem& p = (*problems)[i];
      std::string dir = run_dir + "/problems/" + p.level_dir + "/" + p.stem;
      BenchProblemRow row = RunBenchProblem(p, dir, o, *spec, shared);
      std::lock_guard<std::mutex> lock(mu);
      rows[i] = std::move(row);
      const BenchProblemRow& r = rows[i];
      ++done;
      std::string what =
          r.status == "skipped" || r.status == "failed"
              ? r.status + ": " + r.reason
              : fmt::format("{}, best {}", r.status, Speedup(r.outcome.best_speedup));
      if (r.status == "waiting") what += fmt::format(" ({} answer(s) missing)", r.waiting_answers);
      fmt::print("[{}/{}] {}: {}{}\n", done, problems->size(), p.name, what,
                 r.reused ? " (finished earlier)" : "");
      std::fflush(stdout);
      Status s =
          WriteFileAtomic(run_dir + "/bench.json",
                          BenchJson(b.suite_dir, protocol, prices, device, rows).dump(2) + "\n");
      if (!s.ok()) fmt::print(stderr, "kernelsmith bench: {}\n", s.message());
    }
  };
  std::vector<std::thread> threads;
  size_t n = std::min<size_t>(static_cast<size_t>(b.concurrency), problems->size());
  for (size_t t = 0; t < n; ++t) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  setup->runner->Shutdown();

  // Every problem has run: re-measure the best kernels one at a time on an idle machine.
  BenchVerifyOptions verify_options;
  verify_options.enabled = !b.no_verify;
  verify_options.python = o.python;
  verify_options.backend = o.backend;
  VerifyBenchRows(rows, verify_options, [&](size_t i) {
    const BenchProblemRow& r = rows[i];
    const std::string state = r.verify.value("state", std::string());
    if (state != "not_verified") {  // the table below gives the others' reasons
      VerifyCells c = DescribeVerify(r.verify);
      fmt::print("[verify {}/{}] {}: {}{}\n", i + 1, rows.size(), r.outcome.name,
                 c.remeasured == "-" ? c.verdict : c.remeasured + ", " + c.verdict,
                 r.verify.value("reused", false) ? " (verified earlier)" : "");
      std::fflush(stdout);
    }
    Status s =
        WriteFileAtomic(run_dir + "/bench.json",
                        BenchJson(b.suite_dir, protocol, prices, device, rows).dump(2) + "\n");
    if (!s.ok()) fmt::print(stderr, "kernelsmith bench: {}\n", s.message());
  });

  std::vector<ProblemOutcome> outcomes;
  bool failed = false;
  int waiting = 0;
  for (const BenchProblemRow& r : rows) {
    outcomes.push_back(r.outcome);
    if (r.status == "failed") failed = true;
    waiting += r.waiting_answers;
  }
  fmt::print("\n{}", FormatMetricsTable(ComputeBenchMetrics(outcomes)));
  bool any_verify = std::any_of(rows.begin(), rows.end(), [](const BenchProblemRow& r) {
    return r.verify.value("state", std::string()) != "not_verified";
  });
  if (b.no_verify && !any_verify) {
    fmt::print("\nbest kernels not re-measured (--no-verify; `kernelsmith verify {}/problems/"
               "<level>/<stem>` re-measures one)\n",
               run_dir);
  } else {
    fmt::print("\n{}", FormatVerifyTable(rows));
  }
  if (LlmUsage usage = BenchUsage(rows); usage.calls > 0) {
    fmt::print("{}\n", FormatUsage(usage, prices));
  }
  fmt::print("bench:  {}/bench.json\n", run_dir);
  if (waiting > 0) {
    fmt::print(
        "waiting for {} answers in {}: answer the .prompt.md files in .answer.md files, then "
        "run `kernelsmith bench {} --resume --run-dir {}`\n",
        waiting, o.exchange_dir, b.suite_dir, run_dir);
  }
  return failed ? kExitIncomplete : waiting > 0 ? kExitWaiting : kExitDone;
}

}  // namespace ks
