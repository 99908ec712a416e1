#include "engine/engine.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include "core/file.h"
#include "engine/progress.h"
#include "propose/normalize.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

using store_testing::ScratchDir;

const char* kSeed =
    "import torch\n"
    "# EVOLVE-BLOCK-START\n"
    "BLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8, 16, 32, 64]\n"
    "class ModelNew(torch.nn.Module):\n"
    "    pass\n"
    "# EVOLVE-BLOCK-END\n";

// A Runner whose verdict is a function of the candidate code, counting evaluations per
// normalized code. BLOCK=N gives speedup N/10 (tight CI); BLOCK=16 does not compile.
class FakeRunner : public Runner {
 public:
  void Submit(EvalRequest request, Callback done) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++evaluations_[CodeHash(request.candidate_source)];
      ++total_;
    }
    std::smatch m;
    std::regex block("BLOCK = (\\d+)");
    EvalResult r;
    int n = std::regex_search(request.candidate_source, m, block) ? std::stoi(m[1]) : 0;
    if (n == 16) {
      r = EvalResult::Failure(EvalStatus::kCompileError, "error: BLOCK too large");
    } else {
      r.status = EvalStatus::kOk;
      if (n > untimed_up_to_) {
        r.speedup = n / 10.0;
        r.speedup_ci_lo = n / 10.0 * 0.99;
        r.speedup_ci_hi = n / 10.0 * 1.01;
      }
    }
    std::thread([done, r] { done(r); }).detach();
  }
  void Shutdown() override {}
  // BLOCK values at or below this come back correct but without a timing.
  void set_untimed_up_to(int n) { untimed_up_to_ = n; }
  int total() {
    std::lock_guard<std::mutex> lock(mu_);
    return total_;
  }
  int max_per_code() {
    std::lock_guard<std::mutex> lock(mu_);
    int most = 0;
    for (const auto& [hash, n] : evaluations_) most = std::max(most, n);
    return most;
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> evaluations_;
  int total_ = 0;
  std::atomic<int> untimed_up_to_{0};
};

// A proposer returning scripted outcomes in order, then errors.
class ScriptedProposer : public Proposer {
 public:
  explicit ScriptedProposer(std::vector<Result<Proposal>> script) : script_(std::move(script)) {}
  Result<Proposal> Propose(const ProposalContext&) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (next_ >= script_.size()) return Status::IOError("script spent");
    return script_[next_++];
  }
  ProposerKind kind() const override { return ProposerKind::kLlm; }

 private:
  std::mutex mu_;
  std::vector<Result<Proposal>> script_;
  size_t next_ = 0;
};

struct Fixture {
  ScratchDir dir;
  std::unique_ptr<Store> store;
  EngineOptions options;
  Fixture() {
    store = std::move(*OpenSqliteStore(dir.File("run.db")));
    RunRecord run;
    run.id = "r";
    run.backend = "cpu";
    EXPECT_TRUE(store->CreateRun(run).ok());
    options.run_id = "r";
    options.problem_path = "problem.py";
    options.problem_source = "class Model: pass\n";
    options.seed_path = "seed.py";
    options.seed_source = kSeed;
    options.rounds = 3;
    options.parallel_proposals = 2;
    options.archive.num_islands = 1;
    options.run_dir = dir.path();
  }
  Result<nlohmann::json> Run(Runner* runner, Proposer* proposer, Progress* progress = nullptr) {
    Engine engine(options, store.get(), runner, proposer, progress);
    return engine.Run();
  }
};

TEST(EngineTest, SeedThenRoundsKeepsTheBestCorrectCandidate) {
  Fixture f;
  FakeRunner runner;
  TunerProposer tuner(7);
  Result<nlohmann::json> summary = f.Run(&runner, &tuner);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ((*summary)["rounds_done"], 3);
  EXPECT_DOUBLE_EQ((*summary)["seed_speedup"].get<double>(), 0.1);
  // The best is the fastest ok evaluation in the store, and best.py holds its code.
  double fastest = 0;
  std::string fastest_code;
  std::vector<ProgramRecord> programs = *f.store->ProgramsOfRun("r");
  for (const ProgramRecord& p : programs) {
    Result<EvaluationRecord> e = f.store->GetEvaluation(p.id);
    ASSERT_TRUE(e.ok()) << p.id << " has no evaluation";
    if (e->result.status == EvalStatus::kOk && *e->result.speedup > fastest) {
      fastest = *e->result.speedup;
      fastest_code = p.code;
    }
  }
  EXPECT_GT(fastest, 0.1);
  EXPECT_DOUBLE_EQ((*summary)["best_speedup"].get<double>(), fastest);
  EXPECT_EQ(*ReadFile(f.dir.File("best.py")), fastest_code);
  EXPECT_TRUE(ReadFile(f.dir.File("summary.json")).ok());
}

TEST(EngineTest, ACorrectResultWithoutATimingIsNeverCountedAsASpeedup) {
  // Nothing timed: the seed is the best (best.py), with no speedup at all, not 1.0x.
  {
    Fixture f;
    f.options.rounds = 2;
    FakeRunner runner;
    runner.set_untimed_up_to(1000);
    TunerProposer tuner(7);
    Result<nlohmann::json> summary = f.Run(&runner, &tuner);
    ASSERT_TRUE(summary.ok()) << summary.status().message();
    EXPECT_TRUE((*summary)["best_speedup"].is_null()) << summary->dump(2);
    EXPECT_EQ(*ReadFile(f.dir.File("best.py")), kSeed);
  }
  // The untimed seed (it would have been "1.0x") gives way to a timed 0.2x child.
  {
    Fixture f;
    f.options.rounds = 1;
    f.options.parallel_proposals = 1;
    Proposal child;
    child.code = std::string(kSeed).replace(std::string(kSeed).find("= 1 "), 4, "= 2 ");
    ScriptedProposer proposer({child});
    FakeRunner runner;
    runner.set_untimed_up_to(1);
    Result<nlohmann::json> summary = f.Run(&runner, &proposer);
    ASSERT_TRUE(summary.ok()) << summary.status().message();
    EXPECT_DOUBLE_EQ((*summary)["best_speedup"].get<double>(), 0.2) << summary->dump(2);
    EXPECT_EQ(*ReadFile(f.dir.File("best.py")), child.code);
  }
}

TEST(EngineTest, DuplicatesReuseTheStoredResult) {
  Fixture f;
  f.options.rounds = 12;  // more children than the 7 BLOCK values
  FakeRunner runner;
  TunerProposer tuner(3);
  const std::string log = f.dir.File("run.log");
  Result<nlohmann::json> summary = Status::Ok();
  {
    std::FILE* sink = std::fopen("/dev/null", "w");
    Progress progress(sink, false, log);
    summary = f.Run(&runner, &tuner, &progress);
    progress.Finish();
    std::fclose(sink);
  }
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  // Each repeated proposal is said in the run's log.
  Result<std::string> text = ReadFile(log);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("repeats a program already evaluated"), std::string::npos) << *text;
  EXPECT_EQ(runner.max_per_code(), 1);
  EXPECT_LE(runner.total(), 7);
  EXPECT_GT((*summary)["duplicates"].get<int>(), 0);
  EXPECT_EQ((*summary)["evaluations"].get<int>(), runner.total());
}

TEST(EngineTest, FailuresAreRecordedOnceEach) {
  Fixture f;
  f.options.rounds = 2;
  f.options.parallel_proposals = 1;
  Proposal broken;
  broken.code = std::string(kSeed).replace(std::string(kSeed).find("= 1 "), 4, "= 16 ");
  std::vector<Result<Proposal>> script = {Status::InvalidArgument("SEARCH block 1 matched nothing"),
                                          broken};
  ScriptedProposer proposer(script);
  FakeRunner runner;
  Result<nlohmann::json> summary = f.Run(&runner, &proposer);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ((*summary)["proposal_failures"]["unusable_reply"], 1);
  EXPECT_EQ((*summary)["candidates_by_status"]["compile_error"], 1);
  EXPECT_EQ((*summary)["candidates_by_status"]["ok"], 1);  // the seed
  EXPECT_EQ(runner.total(), 2);
  EXPECT_EQ(f.store->ProgramsOfRun("r")->size(), 2u);
}

TEST(EngineTest, ResumeEvaluatesNothingTwice) {
  Fixture f;
  f.options.rounds = 2;
  FakeRunner first;
  TunerProposer tuner(11);
  ASSERT_TRUE(f.Run(&first, &tuner).ok());
  // A stop mid-round: one program stored and evaluated after the last saved state, one stored
  // but never evaluated.
  auto add = [&](const std::string& id, int block, bool evaluate) {
    ProgramRecord p;
    p.id = id;
    p.run_id = "r";
    p.code = std::regex_replace(kSeed, std::regex("BLOCK = 1 "),
                                "BLOCK = " + std::to_string(block) + " ");
    p.code_hash = CodeHash(p.code);
    p.proposer = ProposerKind::kTuner;
    p.kind = ProgramKind::kEvolution;
    ASSERT_TRUE(f.store->AddProgram(p).ok());
    if (evaluate) {
      EvalResult r;
      r.status = EvalStatus::kOk;
      r.speedup = 9;
      ASSERT_TRUE(f.store->RecordEvaluation(id, r).ok());
    }
  };
  add("p90000", 5, true);  // values outside the tuner's list: never proposed
  add("p90001", 3, false);
  f.options.rounds = 4;
  FakeRunner second;
  Result<nlohmann::json> summary = f.Run(&second, &tuner);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(f.store->PendingPrograms("r")->empty());
  EXPECT_EQ((*summary)["rounds_done"], 4);
  EXPECT_EQ((*summary)["best_program_id"], "p90000");  // taken up from the store
  // Across both sessions no normalized code was evaluated twice.
  std::map<std::string, int> per_hash;
  std::vector<ProgramRecord> programs = *f.store->ProgramsOfRun("r");
  for (const ProgramRecord& p : programs) {
    if (f.store->GetEvaluation(p.id).ok()) ++per_hash[p.code_hash];
  }
  for (const auto& [hash, n] : per_hash) EXPECT_EQ(n, 1) << hash;
  EXPECT_GE(second.total(), 1);  // p90001 at least
  EXPECT_EQ(first.max_per_code(), 1);
  EXPECT_EQ(second.max_per_code(), 1);
}

// Timed against the reference, BLOCK=2 and BLOCK=3 are within the noise of the seed; timed
// against the seed itself (a request with a baseline), BLOCK=2 is as fast and BLOCK=3 faster.
class DuelRunner : public Runner {
 public:
  void Submit(EvalRequest request, Callback done) override {
    std::smatch m;
    std::regex block("BLOCK = (\\d+)");
    int n = std::regex_search(request.candidate_source, m, block) ? std::stoi(m[1]) : 0;
    EvalResult r;
    r.status = EvalStatus::kOk;
    if (request.baseline_source.empty()) {
      r.speedup = 1.0 + 0.005 * (n - 1);
      r.speedup_ci_lo = *r.speedup - 0.02;
      r.speedup_ci_hi = *r.speedup + 0.02;
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      baselines.push_back(request.baseline_source);
      BaselineComparison b;
      b.path = request.baseline_path;
      b.speedup = n == 3 ? 1.03 : 1.0;
      b.speedup_ci_lo = b.speedup - 0.01;
      b.speedup_ci_hi = b.speedup + 0.01;
      r.vs_baseline = b;
    }
    done(r);
  }
  void Shutdown() override {}
  std::mutex mu_;
  std::vector<std::string> baselines;
};

TEST(EngineTest, AChallengerWithinNoiseIsTimedAgainstTheIncumbent) {
  Fixture f;
  f.options.rounds = 2;
  f.options.parallel_proposals = 1;
  auto with_block = [](int n) {
    Proposal p;
    p.code = std::regex_replace(kSeed, std::regex("BLOCK = 1 "), fmt::format("BLOCK = {} ", n));
    return p;
  };
  ScriptedProposer proposer({with_block(2), with_block(3)});
  DuelRunner runner;
  Result<nlohmann::json> summary = f.Run(&runner, &proposer);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  // Both challengers were timed against the seed's code; only BLOCK=3 beat it there.
  ASSERT_EQ(runner.baselines.size(), 2u);
  EXPECT_EQ(runner.baselines[0], kSeed);
  EXPECT_EQ(runner.baselines[1], kSeed);
  EXPECT_EQ((*summary)["rechecks"], 2);
  EXPECT_EQ((*summary)["rechecks_rejected"], 1);
  Result<std::string> best = ReadFile(f.dir.File("best.py"));
  ASSERT_TRUE(best.ok());
  EXPECT_NE(best->find("BLOCK = 3 "), std::string::npos) << *best;
  // The duels are not stored: one evaluation per program, each timed against the reference.
  std::vector<ProgramRecord> programs = *f.store->ProgramsOfRun("r");
  for (const ProgramRecord& p : programs) {
    Result<EvaluationRecord> e = f.store->GetEvaluation(p.id);
    ASSERT_TRUE(e.ok()) << p.id;
    EXPECT_FALSE(e->result.vs_baseline.has_value());
    EXPECT_TRUE(e->result.speedup.has_value());
  }
}

}  // namespace
}  // namespace ks
