#include "cli/final_verify.h"

#include <gtest/gtest.h>

#include "core/file.h"
#include "core/sha256.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

using store_testing::MakeProgram;
using store_testing::ScratchDir;

constexpr char kProblem[] = "class Model:\n    pass\n";

// Answers every request with `result`, the independent figures in its timing stage.
class ScriptedRunner : public Runner {
 public:
  explicit ScriptedRunner(EvalResult result, std::vector<EvalRequest>* seen)
      : result_(std::move(result)), seen_(seen) {}
  void Submit(EvalRequest request, Callback done) override {
    seen_->push_back(std::move(request));
    done(result_);
  }
  void Shutdown() override {}

 private:
  EvalResult result_;
  std::vector<EvalRequest>* seen_;
};

EvalResult Timed(double speedup, double lo, double hi, double independent) {
  EvalResult r;
  r.status = EvalStatus::kOk;
  r.speedup = speedup;
  r.speedup_ci_lo = lo;
  r.speedup_ci_hi = hi;
  r.stages["timing"] = {{"independent",
                         {{"method", "wall_clock_loop"},
                          {"speedup", independent},
                          {"speedup_range", {independent - 0.05, independent + 0.05}}}}};
  return r;
}

// A run directory as a finished run leaves it: run.json, run.db with the problem's source, a
// seed p1 (1.0x), an evolved p2 (2.0x, CI 1.9-2.1) and p3 (2.5x), and the summary naming `best`.
class RunDir {
 public:
  explicit RunDir(const std::string& best = "p2") {
    EXPECT_TRUE(WriteFileAtomic(dir_.File("run.json"), R"({"run_id": "r"})").ok());
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir_.File("run.db"));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    RunRecord run = store_testing::MakeRun("r");
    run.problem_path = dir_.File("missing_problem.py");
    run.problem_source = kProblem;
    run.problem_sha256 = Sha256Hex(kProblem);
    EXPECT_TRUE(store_->CreateRun(run).ok());
    EvalResult seed = Timed(1.0, 0.98, 1.02, 1.0);
    EXPECT_TRUE(store_->AddProgramWithEvaluation(MakeProgram("r", "p1", "seed = 1\n"), seed).ok());
    EvalResult evolved = Timed(2.0, 1.9, 2.1, 2.0);
    EXPECT_TRUE(
        store_->AddProgramWithEvaluation(MakeProgram("r", "p2", "best = 2\n", "p1"), evolved).ok());
    EvalResult later = Timed(2.5, 2.4, 2.6, 2.5);
    EXPECT_TRUE(
        store_->AddProgramWithEvaluation(MakeProgram("r", "p3", "best = 3\n", "p2"), later).ok());
    SetBest(best);
  }
  void SetBest(const std::string& id) {
    nlohmann::json summary = {{"best_program_id", id}, {"best_speedup", nullptr}};
    if (id == "p1") summary["best_speedup"] = 1.0;
    if (id == "p2") summary["best_speedup"] = 2.0;
    if (id == "p3") summary["best_speedup"] = 2.5;
    EXPECT_TRUE(store_->UpdateRunSummary("r", summary).ok());
    EXPECT_TRUE(WriteFileAtomic(dir_.File("best.py"), id + " = 1\n").ok());
  }
  FinalVerifyInput Input(EvalResult answer, std::vector<EvalRequest>* seen, int* started) {
    FinalVerifyInput in;
    in.backend = "cpu";
    in.run_dir = dir_.path();
    in.start_runner = [answer, seen, started](const std::string&) {
      ++*started;
      return Result<std::unique_ptr<Runner>>(std::make_unique<ScriptedRunner>(answer, seen));
    };
    return in;
  }
  std::string File(const std::string& name) const { return dir_.File(name); }

 private:
  ScratchDir dir_;
  std::unique_ptr<Store> store_;
};

TEST(FinalVerifyTest, ReMeasuresTheEvolvedBestAgainstTheStoredProblemAndWritesVerifyJson) {
  RunDir run;
  std::vector<EvalRequest> seen;
  int started = 0;
  FinalVerify v = VerifyRunBest(run.Input(Timed(2.02, 1.95, 2.1, 2.0), &seen, &started));
  ASSERT_EQ(v.state, FinalVerify::State::kVerified) << v.reason;
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].independent_timing);
  EXPECT_EQ(seen[0].problem_source, kProblem);  // the stored problem: its file is gone
  EXPECT_EQ(seen[0].candidate_source, "p2 = 1\n");
  EXPECT_FALSE(v.reused);
  ASSERT_TRUE(v.outcome.has_value());
  EXPECT_EQ(v.record["program_id"], "p2");
  EXPECT_EQ(v.record["recorded_speedup"], 2.0);
  EXPECT_EQ(v.record["recorded_ci95"], nlohmann::json::array({1.9, 2.1}));
  EXPECT_EQ(v.record["recorded_within"], true);
  EXPECT_EQ(v.record["agree"], true);
  Result<std::string> written = ReadFile(run.File("verify.json"));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(nlohmann::json::parse(*written), v.record);
  nlohmann::json j = v.ToJson();
  EXPECT_EQ(j["state"], "verified");
  EXPECT_EQ(j["speedup"], 2.02);
}

TEST(FinalVerifyTest, ARecordedFigureTheReMeasurementDoesNotReachIsMarked) {
  RunDir run;
  std::vector<EvalRequest> seen;
  int started = 0;
  FinalVerify v = VerifyRunBest(run.Input(Timed(1.5, 1.45, 1.55, 1.5), &seen, &started));
  ASSERT_EQ(v.state, FinalVerify::State::kVerified) << v.reason;
  EXPECT_EQ(v.record["agree"], true);             // the two methods agree with each other...
  EXPECT_EQ(v.record["recorded_within"], false);  // ...not with the run's 2.0x [1.9, 2.1]
}

TEST(FinalVerifyTest, AStoredVerifyIsReusedOnlyForTheSameBestAndOnlyWhenAsked) {
  RunDir run;
  std::vector<EvalRequest> seen;
  int started = 0;
  FinalVerifyInput in = run.Input(Timed(2.0, 1.9, 2.1, 2.0), &seen, &started);
  ASSERT_EQ(VerifyRunBest(in).state, FinalVerify::State::kVerified);
  in.reuse_stored = true;
  FinalVerify again = VerifyRunBest(in);
  EXPECT_EQ(again.state, FinalVerify::State::kVerified);
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.ToJson()["reused"], true);
  EXPECT_EQ(started, 1);  // no second worker
  in.reuse_stored = false;
  EXPECT_FALSE(VerifyRunBest(in).reused);
  EXPECT_EQ(started, 2);
}

TEST(FinalVerifyTest, NoVerifyMeasuresNothingButKeepsAStoredVerifyOfTheSameBest) {
  RunDir run;
  std::vector<EvalRequest> seen;
  int started = 0;
  FinalVerifyInput in = run.Input(Timed(2.0, 1.9, 2.1, 2.0), &seen, &started);
  in.measure = false;
  in.reuse_stored = true;
  FinalVerify none = VerifyRunBest(in);
  EXPECT_EQ(none.state, FinalVerify::State::kNotVerified);
  EXPECT_EQ(none.reason, "--no-verify");
  EXPECT_EQ(started, 0);
  in.measure = true;
  ASSERT_EQ(VerifyRunBest(in).state, FinalVerify::State::kVerified);
  in.measure = false;
  EXPECT_TRUE(VerifyRunBest(in).reused);
  run.SetBest("p3");  // a new best: the stored verify is of another kernel
  EXPECT_EQ(VerifyRunBest(in).reason, "--no-verify");
  EXPECT_EQ(started, 1);
}

TEST(FinalVerifyTest, NothingEvolvedOrNothingTimedIsNotVerifiedAndStartsNoWorker) {
  RunDir run("p1");
  std::vector<EvalRequest> seen;
  int started = 0;
  FinalVerify seed = VerifyRunBest(run.Input(Timed(1, 1, 1, 1), &seen, &started));
  EXPECT_EQ(seed.state, FinalVerify::State::kNotVerified);
  EXPECT_EQ(seed.reason, "the best kernel is the seed (no evolved kernel beat it)");
  EXPECT_EQ(seed.ToJson()["state"], "not_verified");
  run.SetBest("");
  EXPECT_EQ(VerifyRunBest(run.Input(Timed(1, 1, 1, 1), &seen, &started)).reason,
            "no correct kernel");
  EXPECT_EQ(started, 0);
  EXPECT_EQ(*WhyNotVerified({{"best_program_id", "p2"}, {"best_speedup", nullptr}},
                            ProgramKind::kEvolution),
            "the best kernel is correct but was not timed");
  EXPECT_FALSE(WhyNotVerified({{"best_program_id", "p2"}, {"best_speedup", 1.2}},
                              ProgramKind::kTranslation));
}

TEST(FinalVerifyTest, AReMeasurementThatCannotRunIsAFailureThatSaysWhy) {
  RunDir run;
  std::vector<EvalRequest> seen;
  int started = 0;
  FinalVerifyInput in =
      run.Input(EvalResult::Failure(EvalStatus::kInfraError, "worker died"), &seen, &started);
  FinalVerify infra = VerifyRunBest(in);
  EXPECT_EQ(infra.state, FinalVerify::State::kFailed);
  EXPECT_EQ(infra.reason, "the evaluation could not run: worker died");
  in.start_runner = [](const std::string&) -> Result<std::unique_ptr<Runner>> {
    return Status::InvalidArgument("the evaluation worker did not start");
  };
  EXPECT_EQ(VerifyRunBest(in).reason, "the evaluation worker did not start");
  in.run_dir = run.File("nowhere");
  FinalVerify unreadable = VerifyRunBest(in);
  EXPECT_EQ(unreadable.state, FinalVerify::State::kFailed);
  EXPECT_NE(unreadable.reason.find("cannot read the run"), std::string::npos);
  EXPECT_EQ(unreadable.ToJson()["state"], "failed");
}

TEST(FinalVerifyTest, AKernelThatFailsItsReEvaluationIsStoredAsVerifiedWithItsStatus) {
  RunDir run;
  std::vector<EvalRequest> seen;
  int started = 0;
  FinalVerify v = VerifyRunBest(
      run.Input(EvalResult::Failure(EvalStatus::kIncorrect, "trial 1: mismatch"), &seen, &started));
  EXPECT_EQ(v.state, FinalVerify::State::kVerified);
  EXPECT_EQ(v.record["status"], "incorrect");
  EXPECT_EQ(v.record["recorded_within"], nullptr);
}

}  // namespace
}  // namespace ks
