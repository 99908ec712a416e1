#include "run/run_setup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "core/file.h"
#include "store/test_util.h"

namespace ks {
namespace {

using store_testing::ScratchDir;

const char* kProblem =
    "import torch\n"
    "class Model(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x\n"
    "def get_inputs():\n"
    "    return [torch.ones(4)]\n"
    "def get_init_inputs():\n"
    "    return []\n";

const char* kSeed =
    "import torch\n"
    "# EVOLVE-BLOCK-START\n"
    "BLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8]\n"
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
                    : 0.1;
    std::thread([done, r] { done(r); }).detach();
  }
  void Shutdown() override {}
};

struct Fixture {
  ScratchDir dir;
  RunOptions options;
  RunTarget target;
  Fixture() {
    EXPECT_TRUE(WriteFileAtomic(dir.File("p.py"), kProblem).ok());
    EXPECT_TRUE(WriteFileAtomic(dir.File("seed.py"), kSeed).ok());
    options.seed_kernel = dir.File("seed.py");
    options.rounds = 2;
    options.islands = 1;
    options.parallel_proposals = 2;
    options.backend = "cpu";
    target.problem = *LoadProblem(dir.File("p.py"));
    target.run_dir = dir.File("run");
    target.run_id = "r1";
  }
  // RunEvolution of `run` with the tuner on a BlockRunner.
  Result<RunOutcome> Evolve(OpenedRun& run) {
    Result<ProposerSpec> spec = ProposerSpecOf(options);
    if (!spec.ok()) return spec.status();
    BlockRunner runner;
    RunShared shared;
    shared.runner = &runner;
    return RunEvolution(options, *spec, target, run, shared, nullptr);
  }
};

TEST(RunSetupTest, TheTunerNeedsASeedWithTunables) {
  ScratchDir dir;
  RunOptions o;
  o.proposer = "tuner";
  Result<SourceFile> seed = LoadSeedFor(o);
  ASSERT_FALSE(seed.ok());
  EXPECT_NE(seed.status().message().find("--seed-kernel"), std::string::npos);
  ASSERT_TRUE(
      WriteFileAtomic(dir.File("plain.py"),
                      "import torch\n# EVOLVE-BLOCK-START\nclass ModelNew(torch.nn.Module):\n"
                      "    pass\n# EVOLVE-BLOCK-END\n")
          .ok());
  o.seed_kernel = dir.File("plain.py");
  seed = LoadSeedFor(o);
  ASSERT_FALSE(seed.ok());
  EXPECT_NE(seed.status().message().find("no tunable constants"), std::string::npos)
      << seed.status().message();
  o.proposer = "files";  // an LLM-like proposer takes any seed, or none
  EXPECT_TRUE(LoadSeedFor(o).ok());
  o.seed_kernel.clear();
  ASSERT_TRUE(LoadSeedFor(o).ok());
  EXPECT_TRUE(LoadSeedFor(o)->source.empty());
}

TEST(RunSetupTest, OpenRunStoresTheConfigAndRefusesATakenDirectory) {
  Fixture f;
  f.options.migration_interval = 3;
  Result<OpenedRun> run = OpenRun(f.options, f.target);
  ASSERT_TRUE(run.ok()) << run.status().message();
  Result<std::string> run_json = ReadFile(f.target.run_dir + "/run.json");
  ASSERT_TRUE(run_json.ok());
  nlohmann::json j = nlohmann::json::parse(*run_json);
  EXPECT_EQ(j["run_id"], "r1");
  EXPECT_EQ(j["config"]["migration_interval"], 3);
  EXPECT_EQ(run->store->GetRun("r1")->config["migration_interval"], 3);
  run->store.reset();

  Result<OpenedRun> again = OpenRun(f.options, f.target);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("already holds a run"), std::string::npos);

  f.target.resume = true;
  Result<OpenedRun> resumed = OpenRun(f.options, f.target);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(resumed->warning, "");
  resumed->store.reset();
}

TEST(RunSetupTest, AResumedRunUsesItsStoredProblemAndWarnsWhenTheFileChanged) {
  Fixture f;
  const std::string original = f.target.problem.source;
  ASSERT_TRUE(OpenRun(f.options, f.target).ok());
  f.target.resume = true;
  // The problem file is gone: the stored source is used.
  ASSERT_TRUE(std::filesystem::remove(f.target.problem.path));
  f.target.problem = SourceFile{};
  Result<OpenedRun> gone = OpenRun(f.options, f.target);
  ASSERT_TRUE(gone.ok()) << gone.status().message();
  EXPECT_EQ(gone->problem.source, original);
  EXPECT_EQ(gone->warning, "");
  gone->store.reset();
  // A different file at its path: still the stored source, with a warning naming the file.
  ASSERT_TRUE(WriteFileAtomic(f.dir.File("p.py"), original + "# edited\n").ok());
  f.target.problem = *LoadProblem(f.dir.File("p.py"));
  Result<OpenedRun> changed = OpenRun(f.options, f.target);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_EQ(changed->problem.source, original);
  EXPECT_NE(changed->warning.find(f.dir.File("p.py") + " differs from the problem"),
            std::string::npos)
      << changed->warning;
}

TEST(RunSetupTest, ResumingARunWithoutAStoredSourceStoresTheMatchingFile) {
  Fixture f;
  SourceFile problem = f.target.problem;
  f.target.problem.source.clear();  // as kernelsmith stored runs before it kept sources
  ASSERT_TRUE(OpenRun(f.options, f.target).ok());
  f.target.resume = true;
  f.target.problem = problem;
  f.target.problem.path = f.dir.File("other.py");
  ASSERT_TRUE(WriteFileAtomic(f.target.problem.path, problem.source + "x = 1\n").ok());
  Result<OpenedRun> wrong = OpenRun(f.options, f.target);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("has no stored copy"), std::string::npos)
      << wrong.status().message();
  f.target.problem = problem;
  Result<OpenedRun> resumed = OpenRun(f.options, f.target);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(resumed->store->GetRun("r1")->problem_source, problem.source);
}

TEST(RunSetupTest, RunEvolutionRunsTheRoundsAndStoresTheStatus) {
  Fixture f;
  f.target.seed = *LoadSeedFor(f.options);
  Result<OpenedRun> run = OpenRun(f.options, f.target);
  ASSERT_TRUE(run.ok());
  Result<RunOutcome> out = f.Evolve(*run);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->finished);
  EXPECT_EQ(out->summary["rounds_done"], 2);
  EXPECT_EQ(run->store->GetRun("r1")->status, RunStatus::kFinished);
}

TEST(RunSetupTest, AResumedRunGoesOnWithItsStoredSeedWhenTheFileIsGone) {
  Fixture f;
  f.options.rounds = 1;
  f.target.seed = *LoadSeedFor(f.options);
  {
    Result<OpenedRun> run = OpenRun(f.options, f.target);
    ASSERT_TRUE(run.ok());
    ASSERT_TRUE(f.Evolve(*run).ok());
  }
  ASSERT_TRUE(std::filesystem::remove(f.dir.File("seed.py")));
  f.target.resume = true;
  f.target.seed = SourceFile{};  // what evolve and bench pass on resume
  Result<OpenedRun> resumed = OpenRun(f.options, f.target);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(resumed->seed.source, kSeed);
  EXPECT_EQ(resumed->seed.path, f.dir.File("seed.py"));
  f.options.rounds = 2;
  Result<RunOutcome> out = f.Evolve(*resumed);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->summary["rounds_done"], 2);
  // The seed was not stored a second time.
  Result<std::vector<ProgramRecord>> programs = resumed->store->ProgramsOfRun("r1");
  ASSERT_TRUE(programs.ok());
  int seeds = 0;
  for (const ProgramRecord& p : *programs) {
    seeds += p.kind == ProgramKind::kSeed;
  }
  EXPECT_EQ(seeds, 1);
}

TEST(RunSetupTest, FilesProposerWaitsWithPromptsThatNameTheDevice) {
  Fixture f;
  f.options.exchange_dir = f.dir.File("exchange");
  Result<ProposerSpec> spec = ProposerSpecOf(f.options);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->kind, "files");
  f.target.seed = *LoadSeedFor(f.options);
  Result<OpenedRun> run = OpenRun(f.options, f.target);
  ASSERT_TRUE(run.ok());
  BlockRunner runner;
  RunShared shared;
  shared.runner = &runner;
  shared.hardware = "Test Accelerator X (sm_99)";
  Result<RunOutcome> out = RunEvolution(f.options, *spec, f.target, *run, shared, nullptr);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_FALSE(out->finished);
  EXPECT_EQ(out->waiting_answers, 2);  // one round of two proposals
  EXPECT_EQ(run->store->GetRun("r1")->status, RunStatus::kWaiting);
  Result<std::string> prompt = ReadFile(f.options.exchange_dir + "/r1-r1-s0.prompt.md");
  ASSERT_TRUE(prompt.ok()) << prompt.status().message();
  EXPECT_NE(prompt->find("Test Accelerator X (sm_99)"), std::string::npos);
}

}  // namespace
}  // namespace ks
