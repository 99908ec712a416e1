#include "bench/suite.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ks {
namespace {

namespace fs = std::filesystem;

class SuiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ks_suite_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  // Writes a minimal problem (or, with `text`, that text) at `rel`.
  void Touch(
      const std::string& rel,
      const std::string& text = "class Model:\n    pass\ndef get_inputs():\n    return []\n") {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  std::vector<std::string> Names(const SuiteFilter& filter, const std::string& dir = "") {
    Result<std::vector<SuiteProblem>> got =
        DiscoverSuite(dir.empty() ? root_.string() : dir, filter);
    EXPECT_TRUE(got.ok()) << got.status().message();
    std::vector<std::string> names;
    if (got.ok()) {
      for (const SuiteProblem& p : *got) names.push_back(p.name);
    }
    return names;
  }
  fs::path root_;
};

TEST_F(SuiteTest, KernelBenchLayoutOrderedByIdWithSeedsAndPackagesLeftOut) {
  Touch("KernelBench/level1/10_Matmul.py");
  Touch("KernelBench/level1/2_Conv.py");
  Touch("KernelBench/level1/2_Conv.cpu.py");
  Touch("KernelBench/level1/__init__.py");
  Touch("KernelBench/level2/1_Fused.py");
  Touch("KernelBench/level2/1_Fused.triton.py");
  Touch("KernelBench/level2/notes.txt");
  std::vector<std::string> want = {"level1/2_Conv", "level1/10_Matmul", "level2/1_Fused"};
  EXPECT_EQ(Names({}, (root_ / "KernelBench").string()), want);
  EXPECT_EQ(Names({}), want);  // the checkout itself
}

TEST_F(SuiteTest, ScriptsWithoutModelAreNotProblems) {
  Touch("time_references.py", "import torch\ndef main():\n    pass\n");
  Touch("level1/1_A.py");
  EXPECT_EQ(Names({}), (std::vector<std::string>{"level1/1_A"}));
}

TEST_F(SuiteTest, UnleveledFilesAreLevelZeroAndFiltersApply) {
  Touch("solo.py");
  Touch("level1/1_A.py");
  Touch("level3/5_B.py");
  EXPECT_EQ(Names({}), (std::vector<std::string>{"level0/solo", "level1/1_A", "level3/5_B"}));
  EXPECT_EQ(Names({{1, 3}, ""}), (std::vector<std::string>{"level1/1_A", "level3/5_B"}));
  EXPECT_EQ(Names({{}, "5_*"}), (std::vector<std::string>{"level3/5_B"}));
  EXPECT_EQ(Names({{}, "level1/*"}), (std::vector<std::string>{"level1/1_A"}));
}

TEST_F(SuiteTest, GroupFoldersOfACuratedSetAreLevelZeroWhenThereAreNoLevels) {
  Touch("activation/1_Relu.py");
  Touch("convolution/3_Conv.py");
  Touch("convolution/3_Conv.cpu.py");
  Touch("_cache/9_X.py");
  Touch(".hidden/8_Y.py");
  EXPECT_EQ(Names({}), (std::vector<std::string>{"activation/1_Relu", "convolution/3_Conv"}));
  EXPECT_EQ(Names({{}, "convolution/*"}), (std::vector<std::string>{"convolution/3_Conv"}));
  EXPECT_TRUE(Names({{1}, ""}).empty());
  Result<std::vector<SuiteProblem>> got = DiscoverSuite(root_.string(), {});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)[1].level, 0);
  EXPECT_EQ((*got)[1].level_dir, "convolution");
  EXPECT_EQ(SeedKernelPath((*got)[1], "cpu"), (root_ / "convolution/3_Conv.cpu.py").string());
  // With levelN/ folders present, other folders are not problems.
  Touch("level1/2_A.py");
  EXPECT_EQ(Names({}), (std::vector<std::string>{"level1/2_A"}));
}

TEST_F(SuiteTest, SeedKernelMatchesTheBackend) {
  Touch("level1/1_A.py");
  Touch("level1/1_A.cpu.py");
  Result<std::vector<SuiteProblem>> got = DiscoverSuite(root_.string(), {});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(SeedKernelPath((*got)[0], "cpu"), (root_ / "level1/1_A.cpu.py").string());
  EXPECT_EQ(SeedKernelPath((*got)[0], "triton"), "");
}

TEST_F(SuiteTest, MissingDirectoryAndBadLevelsAreErrors) {
  EXPECT_FALSE(DiscoverSuite((root_ / "nope").string(), {}).ok());
  EXPECT_FALSE(ParseLevels("1,x").ok());
  Result<std::set<int>> levels = ParseLevels("1,3");
  ASSERT_TRUE(levels.ok());
  EXPECT_EQ(*levels, (std::set<int>{1, 3}));
}

}  // namespace
}  // namespace ks
