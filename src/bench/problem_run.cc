#include "bench/problem_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/file.h"
#include "engine/engine.h"
#include "engine/llm_proposer.h"
#include "propose/tuner.h"
#include "store/sqlite_store.h"
#include "task/task.h"

namespace ks {
namespace {

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

BenchProblemRow Skipped(BenchProblemRow row, std::string reason) {
  row.status = "skipped";
  row.reason = std::move(reason);
  row.outcome.skipped = true;
  return row;
}

BenchProblemRow Failed(BenchProblemRow row, std::string reason) {
  row.status = "failed";
  row.reason = std::move(reason);
  return row;
}

Status Collect(Store* store, const std::string& run_id, int rounds, BenchProblemRow& row) {
  Result<RunRecord> run = store->GetRun(run_id);
  if (!run.ok()) return run.status();
  row.summary = run->summary;
  const nlohmann::json& best = row.summary["best_speedup"];
  row.outcome.best_speedup =
      best.is_number() ? std::optional<double>(best.get<double>()) : std::nullopt;
  Result<std::vector<ProgramRecord>> programs = store->ProgramsOfRun(run_id);
  if (!programs.ok()) return programs.status();
  std::vector<double> per_round(static_cast<size_t>(std::max(rounds, 0)) + 1, 0.0);
  for (const ProgramRecord& p : *programs) {
    Result<EvaluationRecord> eval = store->GetEvaluation(p.id);
    // a correct result without a timing has no speedup to count (never 1.0x by default)
    if (!eval.ok() || eval->result.status != EvalStatus::kOk || !eval->result.speedup) continue;
    int round = p.metrics.is_object() ? p.metrics.value("round", 0) : 0;
    round = std::clamp(round, 0, static_cast<int>(per_round.size()) - 1);
    per_round[round] = std::max(per_round[round], *eval->result.speedup);
  }
  // The best kernel's roofline: how close it and the reference came to the floor.
  const nlohmann::json& best_id = row.summary["best_program_id"];
  if (best_id.is_string() && row.outcome.best_speedup) {
    Result<EvaluationRecord> eval = store->GetEvaluation(best_id.get<std::string>());
    const std::optional<Roofline>* rl = eval.ok() ? &eval->result.roofline : nullptr;
    if (rl != nullptr && *rl && (*rl)->cand && (*rl)->ref) {
      row.outcome.best_pct_of_floor = (*rl)->cand->pct_of_floor;
      row.outcome.ref_pct_of_floor = (*rl)->ref->pct_of_floor;
    }
  }
  double cap = row.outcome.best_speedup.value_or(0.0);
  double running = 0;
  row.rounds_to_best = -1;
  for (size_t r = 0; r < per_round.size(); ++r) {
    running = std::min(std::max(running, per_round[r]), cap);
    per_round[r] = running;
    if (row.rounds_to_best < 0 && cap > 0 && running >= cap)
      row.rounds_to_best = static_cast<int>(r);
  }
  row.outcome.best_by_round = per_round;
  double r1 = per_round[std::min<size_t>(1, per_round.size() - 1)];
  row.outcome.round1_speedup = r1 > 0 ? std::optional<double>(r1) : std::nullopt;
  return Status::Ok();
}

}  // namespace

nlohmann::json BenchProblemRow::ToJson() const {
  return {{"name", outcome.name},
          {"level", outcome.level},
          {"status", status},
          {"reason", reason},
          {"problem", problem_path},
          {"seed", seed_path},
          {"run_dir", run_dir},
          {"reused", reused},
          {"best_speedup", Optional(outcome.best_speedup)},
          {"round1_speedup", Optional(outcome.round1_speedup)},
          {"seed_speedup", summary.value("seed_speedup", nlohmann::json(nullptr))},
          {"rounds_done", summary.value("rounds_done", 0)},
          {"rounds_to_best", rounds_to_best},
          {"candidates_by_status", summary.value("candidates_by_status", nlohmann::json::object())},
          {"llm", summary.value("llm", nlohmann::json::object())},
          {"best_path", summary.value("best_path", nlohmann::json(nullptr))},
          {"series", outcome.best_by_round},
          {"best_pct_of_floor", Optional(outcome.best_pct_of_floor)},
          {"ref_pct_of_floor", Optional(outcome.ref_pct_of_floor)}};
}

Status CollectProblemOutcome(const std::string& problem_dir, const std::string& run_id, int rounds,
                             BenchProblemRow& row) {
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(problem_dir + "/run.db");
  if (!store.ok()) return store.status();
  return Collect(store->get(), run_id, rounds, row);
}

BenchProblemRow RunBenchProblem(const SuiteProblem& problem, const std::string& problem_dir,
                                const BenchProtocol& protocol, const BenchShared& shared) {
  BenchProblemRow row;
  row.outcome.name = problem.name;
  row.outcome.level = problem.level;
  row.problem_path = problem.path;
  Result<SourceFile> source = LoadProblem(problem.path);
  if (!source.ok()) return Skipped(row, "not a usable problem: " + source.status().message());

  SourceFile seed;
  row.seed_path = SeedKernelPath(problem, protocol.backend);
  if (!row.seed_path.empty()) {
    Result<SourceFile> loaded = LoadCandidate(row.seed_path);
    if (!loaded.ok()) return Skipped(row, "unusable seed: " + loaded.status().message());
    seed = *loaded;
  }
  if (protocol.proposer == "tuner") {
    if (seed.source.empty()) {
      return Skipped(row, fmt::format("no seed kernel {}.{}.py for the tuner", problem.stem,
                                      protocol.backend));
    }
    Result<std::vector<TunableParam>> tunables = ScanTunables(seed.source);
    if (!tunables.ok() || tunables->empty()) {
      return Skipped(row, row.seed_path + ": no tunable constants for the tuner" +
                              (tunables.ok() ? "" : " (" + tunables.status().message() + ")"));
    }
  }

  row.run_dir = problem_dir;
  std::error_code ec;
  std::filesystem::create_directories(problem_dir, ec);
  if (ec) return Failed(row, "cannot create " + problem_dir + ": " + ec.message());
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(problem_dir + "/run.db");
  if (!store.ok()) return Failed(row, store.status().message());

  // An earlier session's run: reuse it when finished, resume it otherwise.
  std::string run_id = problem.level_dir + "-" + problem.stem;
  Result<RunRecord> existing = (*store)->GetRun(run_id);
  if (existing.ok()) {
    if (existing->problem_sha256 != source->sha256) {
      return Failed(row, problem.path + " changed since its run in " + problem_dir +
                             " started; restore it or use another --run-dir");
    }
    if (existing->status == RunStatus::kFinished) {
      row.reused = true;
      row.status = "finished";
      Status s = Collect(store->get(), run_id, protocol.rounds, row);
      return s.ok() ? row : Failed(row, s.message());
    }
    if (Status st = (*store)->UpdateRunStatus(run_id, RunStatus::kRunning); !st.ok()) {
      return Failed(row, "cannot mark the run as running in run.db: " + st.message());
    }
  } else {
    nlohmann::json config = {
        {"backend", protocol.backend},  {"proposer", protocol.proposer},
        {"rounds", protocol.rounds},    {"islands", protocol.islands},
        {"seed_kernel", row.seed_path}, {"seed", protocol.seed},
        {"trials", protocol.trials},    {"parallel_proposals", protocol.parallel_proposals}};
    Status s = WriteFileAtomic(problem_dir + "/run.json",
                               nlohmann::json{{"run_id", run_id}, {"config", config}}.dump(2));
    RunRecord run;
    run.id = run_id;
    run.config = config;
    run.problem_path = source->path;
    run.problem_sha256 = source->sha256;
    run.problem_source = source->source;
    run.backend = protocol.backend;
    if (s.ok()) s = (*store)->CreateRun(run);
    if (!s.ok()) return Failed(row, s.message());
  }

  std::unique_ptr<Proposer> proposer;
  if (protocol.proposer == "tuner") {
    proposer = std::make_unique<TunerProposer>(protocol.seed);
  } else {
    LlmProposerOptions lo;
    lo.run_id = run_id;
    lo.model = protocol.proposer == "llm" ? protocol.model : "command";
    lo.kind = protocol.proposer == "llm" ? ProposerKind::kLlm : ProposerKind::kCommand;
    lo.max_tokens = protocol.max_tokens;
    Result<std::unique_ptr<LlmProposer>> p =
        LlmProposer::Create(shared.llm_client, store->get(), lo);
    if (!p.ok()) return Failed(row, p.status().message());
    proposer = std::move(*p);
  }

  EngineOptions eo;
  eo.run_id = run_id;
  eo.problem_path = source->path;
  eo.problem_source = source->source;
  eo.seed_path = seed.path;
  eo.seed_source = seed.source;
  eo.backend = protocol.backend;
  eo.hardware = shared.hardware;
  eo.rounds = protocol.rounds;
  eo.parallel_proposals = protocol.parallel_proposals;
  eo.trials = protocol.trials;
  eo.seed = protocol.seed;
  eo.archive.num_islands = protocol.islands;
  eo.archive.seed = protocol.seed;
  eo.archive.migration_interval = 5;
  eo.run_dir = problem_dir;
  std::FILE* devnull = std::fopen("/dev/null", "w");
  if (devnull == nullptr) return Failed(row, "cannot open /dev/null");
  Result<nlohmann::json> summary = Status::Ok();
  {
    Progress progress(devnull, false, problem_dir + "/run.log");
    Engine engine(eo, store->get(), shared.runner, proposer.get(), &progress);
    summary = engine.Run();
    progress.Finish();
  }
  std::fclose(devnull);
  if (!summary.ok()) {
    std::string reason = summary.status().message();
    if (Status st = (*store)->UpdateRunStatus(run_id, RunStatus::kFailed); !st.ok()) {
      reason += "; and the failed status could not be stored in run.db: " + st.message();
    }
    return Failed(row, reason);
  }
  bool done = summary->value("rounds_done", 0) >= protocol.rounds &&
              summary->value("waiting_answers", 0) == 0;
  if (Status st =
          (*store)->UpdateRunStatus(run_id, done ? RunStatus::kFinished : RunStatus::kWaiting);
      !st.ok()) {
    return Failed(row, "cannot store the run's status in run.db: " + st.message());
  }
  row.status = done ? "finished" : "unfinished";
  Status s = Collect(store->get(), run_id, protocol.rounds, row);
  return s.ok() ? row : Failed(row, s.message());
}

}  // namespace ks
