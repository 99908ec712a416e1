// Resuming a run whose last session was killed between writing best.py and storing its state,
// and a run whose problem itself is broken.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <thread>

#include "core/file.h"
#include "engine/engine.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

const char* kSeed =
    "import torch\n"
    "# EVOLVE-BLOCK-START\n"
    "BLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8, 16, 32, 64]\n"
    "class ModelNew(torch.nn.Module):\n"
    "    pass\n"
    "# EVOLVE-BLOCK-END\n";

// Every candidate is correct with speedup BLOCK / 10.
class BlockRunner : public Runner {
 public:
  void Submit(EvalRequest request, Callback done) override {
    std::smatch m;
    EvalResult r;
    r.status = EvalStatus::kOk;
    r.speedup = std::regex_search(request.candidate_source, m, std::regex("BLOCK = (\\d+)"))
                    ? std::stoi(m[1]) / 10.0
                    : 0.0;
    std::thread([done, r] { done(r); }).detach();
  }
  void Shutdown() override {}
};

TEST(EngineResumeTest, BestPyIsRewrittenFromTheStoredBest) {
  store_testing::ScratchDir dir;
  std::unique_ptr<Store> store = std::move(*OpenSqliteStore(dir.File("run.db")));
  RunRecord run;
  run.id = "r";
  run.backend = "cpu";
  ASSERT_TRUE(store->CreateRun(run).ok());
  EngineOptions options;
  options.run_id = "r";
  options.problem_path = "problem.py";
  options.problem_source = "class Model: pass\n";
  options.seed_path = "seed.py";
  options.seed_source = kSeed;
  options.rounds = 2;
  options.parallel_proposals = 2;
  options.archive.num_islands = 1;
  options.run_dir = dir.path();
  BlockRunner runner;
  TunerProposer tuner(5);
  Result<nlohmann::json> first = Engine(options, store.get(), &runner, &tuner, nullptr).Run();
  ASSERT_TRUE(first.ok()) << first.status().message();
  std::string best_id = (*first)["best_program_id"].get<std::string>();
  ASSERT_FALSE(best_id.empty());
  // What a killed session leaves: a best.py for a challenger its state never recorded.
  ASSERT_TRUE(WriteFileAtomic(dir.File("best.py"), "class ModelNew: pass  # challenger\n").ok());

  Result<nlohmann::json> resumed = Engine(options, store.get(), &runner, &tuner, nullptr).Run();
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ((*resumed)["best_program_id"], best_id);
  EXPECT_EQ(*ReadFile(dir.File("best.py")), store->GetProgram(best_id)->code);
}

// The worker's verdict on every candidate of a problem whose get_inputs() is broken.
class BrokenProblemRunner : public Runner {
 public:
  void Submit(EvalRequest, Callback done) override {
    ++calls;
    done(EvalResult::Failure(EvalStatus::kInfraError,
                             "problem p.py: get_inputs() raised InputError: get_inputs() "
                             "returned a dict; it must return a list"));
  }
  void Shutdown() override {}
  int calls = 0;
};

TEST(EngineProblemTest, ABrokenProblemStopsTheRunAfterTheSeed) {
  store_testing::ScratchDir dir;
  std::unique_ptr<Store> store = std::move(*OpenSqliteStore(dir.File("run.db")));
  RunRecord run;
  run.id = "r";
  ASSERT_TRUE(store->CreateRun(run).ok());
  EngineOptions options;
  options.run_id = "r";
  options.seed_source = kSeed;
  options.rounds = 5;
  options.archive.num_islands = 1;
  BrokenProblemRunner runner;
  TunerProposer tuner(5);
  Result<nlohmann::json> summary = Engine(options, store.get(), &runner, &tuner, nullptr).Run();
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(summary.status().message().find("problem p.py: get_inputs() raised"),
            std::string::npos);
  EXPECT_EQ(runner.calls, 1) << "only the seed is evaluated";
}

}  // namespace
}  // namespace ks
