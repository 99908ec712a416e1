#include "run/run_setup.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "core/file.h"
#include "engine/engine.h"
#include "propose/tuner.h"
#include "run/run_problem.h"
#include "store/sqlite_store.h"

namespace ks {

Result<SourceFile> LoadSeedFor(const RunOptions& o) {
  SourceFile seed;
  if (!o.seed_kernel.empty()) {
    Result<SourceFile> loaded = LoadCandidate(o.seed_kernel);
    if (!loaded.ok()) return loaded.status();
    seed = *loaded;
  }
  if (o.proposer != "tuner") return seed;
  if (seed.source.empty()) {
    return Status::InvalidArgument(
        "the tuner proposer needs a seed kernel with tunable constants: give --seed-kernel "
        "SEED.py (mark ranges with `# ks:tune NAME=[v1, v2, ...]` inside its EVOLVE-BLOCK), "
        "or configure an LLM with --llm-url URL --model NAME to translate the reference");
  }
  Result<std::vector<TunableParam>> tunables = ScanTunables(seed.source);
  if (!tunables.ok())
    return Status::InvalidArgument(seed.path + ": " + tunables.status().message());
  if (tunables->empty()) {
    return Status::InvalidArgument(seed.path +
                                   ": no tunable constants in the EVOLVE-BLOCK for the tuner; add "
                                   "`# ks:tune NAME=[v1, v2, ...]` comments");
  }
  return seed;
}

namespace {

// The seed program stored in a run (an empty source when none was stored yet).
Result<SourceFile> StoredSeed(Store& store, const std::string& run_id) {
  Result<std::vector<ProgramRecord>> programs = store.ProgramsOfRun(run_id);
  if (!programs.ok()) return programs.status();
  for (const ProgramRecord& p : *programs) {
    if (p.kind != ProgramKind::kSeed) continue;
    std::string path = p.metrics.value("description", std::string());
    if (path.rfind("seed ", 0) == 0) path.erase(0, 5);
    return SourceFile{path, p.code, ""};
  }
  return SourceFile{};
}

}  // namespace

Result<OpenedRun> OpenRun(const RunOptions& o, const RunTarget& t) {
  std::error_code ec;
  std::filesystem::create_directories(t.run_dir, ec);
  if (ec) {
    return Status::InvalidArgument("cannot create run directory " + t.run_dir + ": " +
                                   ec.message());
  }
  if (!t.resume && std::filesystem::exists(t.run_dir + "/run.db")) {
    return Status::InvalidArgument(t.run_dir +
                                   " already holds a run; add --resume to continue it, or choose "
                                   "another --run-dir");
  }
  OpenedRun run;
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(t.run_dir + "/run.db");
  if (!store.ok()) return store.status();
  run.store = std::move(*store);
  if (t.resume) {
    Result<RunRecord> stored = run.store->GetRun(t.run_id);
    if (!stored.ok()) return stored.status();
    Result<RunProblem> problem = ProblemOfRun(*stored, t.problem.path);
    if (!problem.ok())
      return Status::InvalidArgument("cannot resume: " + problem.status().message());
    if (!problem->stored) {
      // A run made before sources were stored gets its (checked) source now.
      Status s = run.store->SetProblemSource(t.run_id, problem->problem.source);
      if (!s.ok()) return s;
      stored->problem_source = problem->problem.source;
    }
    run.problem = std::move(problem->problem);
    run.warning = std::move(problem->warning);
    run.record = std::move(*stored);
    Result<SourceFile> seed = StoredSeed(*run.store, t.run_id);
    if (seed.ok() && seed->source.empty()) seed = LoadSeedFor(o);  // stopped before storing it
    if (!seed.ok()) return seed.status();
    run.seed = std::move(*seed);
    return run;
  }
  run.problem = t.problem;
  run.seed = t.seed;
  run.record.id = t.run_id;
  run.record.config = ConfigOf(o);
  run.record.problem_path = t.problem.path;
  run.record.problem_sha256 = t.problem.sha256;
  run.record.problem_source = t.problem.source;
  run.record.backend = o.backend;
  nlohmann::json run_json = {{"run_id", t.run_id}, {"config", run.record.config}};
  Status s = WriteFileAtomic(t.run_dir + "/run.json", run_json.dump(2) + "\n");
  if (!s.ok()) return s;
  s = run.store->CreateRun(run.record);
  if (!s.ok()) return s;
  return run;
}

Result<RunOutcome> RunEvolution(const RunOptions& o, ProposerSpec spec, const RunTarget& t,
                                OpenedRun& run, const RunShared& shared, Progress* progress) {
  Store* store = run.store.get();
  auto stored = [&](const Status& s) {
    return s.ok() ? s
                  : Status::IOError("cannot store the run's status in " + t.run_dir +
                                    "/run.db: " + s.message());
  };
  if (Status s = stored(store->UpdateRunStatus(t.run_id, RunStatus::kRunning)); !s.ok()) return s;
  spec.run_id = t.run_id;
  if (spec.kind == "llm" || spec.kind == "command") spec.client = shared.llm_client;
  Result<std::unique_ptr<Proposer>> proposer = MakeProposer(spec, store);
  if (!proposer.ok()) {
    (void)store->UpdateRunStatus(t.run_id, RunStatus::kFailed);
    return proposer.status();
  }

  EngineOptions eo;
  eo.run_id = t.run_id;
  eo.problem_path = run.problem.path;
  eo.problem_source = run.problem.source;
  eo.seed_path = run.seed.path;
  eo.seed_source = run.seed.source;
  eo.backend = o.backend;
  eo.hardware = shared.hardware;
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
  eo.prices = {o.price_in, o.price_out};
  eo.run_dir = t.run_dir;
  if (Status v = eo.archive.Validate(); !v.ok()) {
    (void)store->UpdateRunStatus(t.run_id, RunStatus::kFailed);
    return Status::InvalidArgument(v.message());
  }
  if (progress != nullptr && !run.warning.empty()) progress->Log("warning: " + run.warning);
  if (progress != nullptr) {
    progress->Log(fmt::format("{} {}: {} proposer, backend {}, {} rounds, {} island(s), run dir {}",
                              t.resume ? "resuming" : "starting", t.run_id, o.proposer, o.backend,
                              o.rounds, o.islands, t.run_dir));
  }
  Result<nlohmann::json> summary = Status::Ok();
  {
    Engine engine(eo, store, shared.runner, proposer->get(), progress);
    summary = engine.Run();
  }
  if (!summary.ok()) {
    Status s = summary.status();
    if (Status st = store->UpdateRunStatus(t.run_id, RunStatus::kFailed); !st.ok()) {
      std::string message = s.message() + "; and the failed status could not be stored in " +
                            t.run_dir + "/run.db: " + st.message();
      s = s.code() == Status::Code::kInvalidArgument ? Status::InvalidArgument(message)
                                                     : Status::IOError(message);
    }
    return s;
  }
  RunOutcome out;
  out.summary = std::move(*summary);
  out.waiting_answers = out.summary.value("waiting_answers", 0);
  out.finished = out.waiting_answers == 0 && out.summary.value("rounds_done", 0) >= o.rounds;
  RunStatus status = out.finished ? RunStatus::kFinished : RunStatus::kWaiting;
  if (Status s = stored(store->UpdateRunStatus(t.run_id, status)); !s.ok()) return s;
  return out;
}

}  // namespace ks
