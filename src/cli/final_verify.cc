#include "cli/final_verify.h"

#include <filesystem>

#include "cli/evolve_setup.h"
#include "cli/one_off_pool.h"
#include "cli/run_dir.h"
#include "core/file.h"
#include "run/run_problem.h"

namespace ks {
namespace {

FinalVerify Failed(std::string reason) {
  FinalVerify f;
  f.state = FinalVerify::State::kFailed;
  f.reason = std::move(reason);
  return f;
}

// What is re-measured: the run's stored problem, its best program and that program's stored
// evaluation (the figure the run recorded, with its interval).
struct RunBest {
  RunRecord run;
  SourceFile problem;
  std::optional<ProgramRecord> best;
  std::optional<EvalResult> best_eval;
};

Result<RunBest> LoadRunBest(const std::string& run_dir) {
  Result<StoredRun> opened = ReadRunDir(run_dir);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<Store>& store = opened->store;
  RunBest b;
  b.run = std::move(opened->run);
  Result<RunProblem> problem = ProblemOfRun(b.run);
  if (!problem.ok()) return problem.status();
  b.problem = problem->problem;
  const std::string best_id = b.run.summary.value("best_program_id", std::string());
  if (!best_id.empty()) {
    Result<ProgramRecord> best = store->GetProgram(best_id);
    if (!best.ok()) return best.status();
    b.best = std::move(*best);
    if (Result<EvaluationRecord> e = store->GetEvaluation(best_id); e.ok()) {
      b.best_eval = std::move(e->result);
    }
  }
  return b;
}

// verify.json of `run_dir` when it re-measured `program_id`; nullopt otherwise.
std::optional<nlohmann::json> StoredVerify(const std::string& run_dir,
                                           const std::string& program_id) {
  if (!std::filesystem::exists(run_dir + "/verify.json")) return std::nullopt;
  Result<nlohmann::json> stored = ReadJsonFile(run_dir + "/verify.json");
  if (!stored.ok() || !stored->is_object() || !stored->contains("status")) return std::nullopt;
  if (stored->value("program_id", std::string()) != program_id) return std::nullopt;
  return *stored;
}

Result<std::unique_ptr<Runner>> StartFreshWorker(const std::string& python,
                                                 const std::string& backend) {
  Result<OneOffPool> started = StartOneOffPool(python, std::nullopt, backend);
  if (!started.ok()) return started.status();
  return std::unique_ptr<Runner>(std::move(started->pool));
}

}  // namespace

FinalVerify FinalVerify::NotVerified(std::string reason) {
  FinalVerify f;
  f.reason = std::move(reason);
  return f;
}

const char* FinalVerifyStateName(FinalVerify::State state) {
  switch (state) {
    case FinalVerify::State::kVerified:
      return "verified";
    case FinalVerify::State::kNotVerified:
      return "not_verified";
    case FinalVerify::State::kFailed:
      return "failed";
  }
  return "failed";
}

nlohmann::json FinalVerify::ToJson() const {
  nlohmann::json j =
      state == State::kVerified && record.is_object() ? record : nlohmann::json::object();
  j["state"] = FinalVerifyStateName(state);
  j["reason"] = reason;
  j["reused"] = reused;
  return j;
}

std::optional<std::string> WhyNotVerified(const nlohmann::json& summary,
                                          std::optional<ProgramKind> best_kind) {
  const std::string best_id = summary.value("best_program_id", std::string());
  if (best_id.empty()) return "no correct kernel";
  if (!summary.contains("best_speedup") || !summary["best_speedup"].is_number()) {
    return "the best kernel is correct but was not timed";
  }
  if (best_kind == ProgramKind::kSeed) {
    return "the best kernel is the seed (no evolved kernel beat it)";
  }
  return std::nullopt;
}

FinalVerify VerifyRunBest(const FinalVerifyInput& in) {
  Result<RunBest> loaded = LoadRunBest(in.run_dir);
  if (!loaded.ok()) return Failed("cannot read the run: " + loaded.status().message());
  const RunBest& b = *loaded;
  const nlohmann::json& summary = b.run.summary;
  if (std::optional<std::string> why = WhyNotVerified(
          summary, b.best ? std::optional<ProgramKind>(b.best->kind) : std::nullopt)) {
    return FinalVerify::NotVerified(*why);
  }
  const std::string best_id = b.best->id;
  if (in.reuse_stored) {
    if (std::optional<nlohmann::json> stored = StoredVerify(in.run_dir, best_id)) {
      FinalVerify f;
      f.state = FinalVerify::State::kVerified;
      f.record = std::move(*stored);
      f.reused = true;
      return f;
    }
  }
  if (!in.measure) return FinalVerify::NotVerified("--no-verify");
  const std::string candidate_path = in.run_dir + "/best.py";
  Result<std::string> best = ReadFile(candidate_path);
  if (!best.ok()) return Failed(best.status().message());

  Result<std::unique_ptr<Runner>> runner =
      in.start_runner ? in.start_runner(in.backend) : StartFreshWorker(in.python, in.backend);
  if (!runner.ok()) return Failed(runner.status().message());
  EvalRequest request;
  request.problem_path = b.problem.path;
  request.problem_source = b.problem.source;
  request.candidate_path = candidate_path;
  request.candidate_source = *best;
  request.backend = in.backend;
  VerifyOutcome v = Verify(runner->get(), std::move(request));
  (*runner)->Shutdown();
  if (v.result.status == EvalStatus::kInfraError) {
    return Failed("the evaluation could not run: " + v.result.message);
  }

  const double recorded = summary["best_speedup"].get<double>();
  nlohmann::json record = VerifyRecord(v, candidate_path, recorded);
  record["program_id"] = best_id;
  // The run's figure against its re-measurement by the same method, as verify compares the two
  // methods: the recorded interval (from the best's stored evaluation) overlaps the new one.
  std::optional<double> lo, hi;
  if (b.best_eval) {
    lo = b.best_eval->speedup_ci_lo;
    hi = b.best_eval->speedup_ci_hi;
  }
  record["recorded_ci95"] = lo && hi ? nlohmann::json::array({*lo, *hi}) : nlohmann::json(nullptr);
  record["recorded_within"] =
      v.result.speedup ? nlohmann::json(FiguresAgree(*v.result.speedup, v.result.speedup_ci_lo,
                                                     v.result.speedup_ci_hi, recorded, lo, hi))
                       : nlohmann::json(nullptr);
  Status written = WriteFileAtomic(in.run_dir + "/verify.json", record.dump(2) + "\n");
  if (!written.ok()) return Failed(written.message());
  FinalVerify f;
  f.state = FinalVerify::State::kVerified;
  f.record = std::move(record);
  f.outcome = std::move(v);
  return f;
}

}  // namespace ks
