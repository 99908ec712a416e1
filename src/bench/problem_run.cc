#include "bench/problem_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

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
          {"waiting_answers", waiting_answers},
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
          {"ref_pct_of_floor", Optional(outcome.ref_pct_of_floor)},
          {"verify", verify}};
}

Status CollectProblemOutcome(const std::string& problem_dir, const std::string& run_id, int rounds,
                             BenchProblemRow& row) {
  SqliteStoreOptions read_only;
  read_only.read_only = true;
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(problem_dir + "/run.db", read_only);
  if (!store.ok()) return store.status();
  return Collect(store->get(), run_id, rounds, row);
}

BenchProblemRow RunBenchProblem(const SuiteProblem& problem, const std::string& problem_dir,
                                const RunOptions& bench_options, const ProposerSpec& spec,
                                const RunShared& shared) {
  BenchProblemRow row;
  row.outcome.name = problem.name;
  row.outcome.level = problem.level;
  row.problem_path = problem.path;
  Result<SourceFile> source = LoadProblem(problem.path);
  if (!source.ok()) return Skipped(row, "not a usable problem: " + source.status().message());
  RunOptions options = bench_options;
  options.seed_kernel = row.seed_path = SeedKernelPath(problem, options.backend);
  // A resumed problem goes on with the seed stored in its run.db (OpenRun).
  bool resume = std::filesystem::exists(problem_dir + "/run.json");
  if (options.proposer == "tuner" && row.seed_path.empty() && !resume) {
    return Skipped(
        row, fmt::format("no seed kernel {}.{}.py for the tuner", problem.stem, options.backend));
  }
  Result<SourceFile> seed = resume ? Result<SourceFile>(SourceFile{}) : LoadSeedFor(options);
  if (!seed.ok()) return Skipped(row, "unusable seed: " + seed.status().message());

  row.run_dir = problem_dir;
  RunTarget target{*source, *seed, problem_dir, problem.level_dir + "-" + problem.stem, resume};
  Result<OpenedRun> run = OpenRun(options, target);
  if (!run.ok()) return Failed(row, run.status().message());
  // The resumed run goes on with its stored problem; a changed suite file is said, not hidden
  // (run.log has it too).
  if (!run->warning.empty()) fmt::print(stderr, "kernelsmith bench: warning: {}\n", run->warning);
  // A run that did all its rounds in an earlier session is taken as it is.
  if (target.resume && run->record.status == RunStatus::kFinished &&
      run->record.summary.value("rounds_done", 0) >= options.rounds) {
    row.reused = true;
    row.status = "finished";
    Status s = Collect(run->store.get(), target.run_id, options.rounds, row);
    return s.ok() ? row : Failed(row, s.message());
  }
  std::FILE* devnull = std::fopen("/dev/null", "w");
  if (devnull == nullptr) return Failed(row, "cannot open /dev/null");
  Result<RunOutcome> outcome = Status::Ok();
  {
    Progress progress(devnull, false, problem_dir + "/run.log");
    outcome = RunEvolution(options, spec, target, *run, shared, &progress);
    progress.Finish();
  }
  std::fclose(devnull);
  if (!outcome.ok()) return Failed(row, outcome.status().message());
  row.status = outcome->finished ? "finished" : "waiting";
  row.waiting_answers = outcome->waiting_answers;
  Status s = Collect(run->store.get(), target.run_id, options.rounds, row);
  return s.ok() ? row : Failed(row, s.message());
}

}  // namespace ks
