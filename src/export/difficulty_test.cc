#include "export/difficulty.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "bench/suite.h"
#include "core/file.h"

namespace ks {
namespace {

TEST(DifficultyTest, LevelFromPath) {
  EXPECT_EQ(LevelFromPath("KernelBench/level2/19_Gemm.py"), 2);
  EXPECT_EQ(LevelFromPath("/runs/b/problems/level3/1_MLP/run.db"), 3);
  EXPECT_EQ(LevelFromPath("suites/level10/x.py"), 10);
  EXPECT_EQ(LevelFromPath("examples/colsum/problem.py"), 0);
  EXPECT_EQ(LevelFromPath("problems/level0/1_ColSum"), 0);  // bench's unleveled problems
  EXPECT_EQ(LevelFromPath("data/levelup/x.py"), 0);
  EXPECT_EQ(LevelFromPath("level1_notes/x.py"), 0);
}

TEST(DifficultyTest, CountsOperatorsIgnoringCommentsAndStrings) {
  const char* one =
      "# torch.relu(x) in a comment does not count\n"
      "class Model(nn.Module):\n"
      "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
      "        '''torch.exp(x) in a docstring does not count'''\n"
      "        return torch.sum(x, dim=0)\n"
      "def get_inputs():\n    return [torch.randn(4, 4) * 2]\n";
  EXPECT_EQ(AnalyzeReference(one).ops, 1);
  EXPECT_EQ(EstimateLevel(one), 1);
  const char* chain =
      "class Model(nn.Module):\n"
      "    def __init__(self):\n        super().__init__()\n"
      "        self.linear = nn.Linear(8, 8)\n"
      "    def forward(self, x, y):\n"
      "        z = self.linear(x) + y\n"
      "        return F.gelu(z).sum(dim=1) * 0.5\n";
  // nn.Linear, F.gelu, .sum, + and *.
  ReferenceOps r = AnalyzeReference(chain);
  EXPECT_EQ(r.ops, 5);
  EXPECT_EQ(r.heavy_layers, 1);
  EXPECT_FALSE(r.layer_stack);
  EXPECT_EQ(EstimateLevel(chain), 2);
  const char* stack =
      "class Model(nn.Module):\n"
      "    def __init__(self, n):\n        super().__init__()\n"
      "        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(n)])\n"
      "    def forward(self, x):\n"
      "        for layer in self.layers:\n            x = layer(x)\n"
      "        return x\n";
  EXPECT_TRUE(AnalyzeReference(stack).layer_stack);
  EXPECT_EQ(EstimateLevel(stack), 3);
  EXPECT_EQ(EstimateLevel(""), 0);
  const char* block =
      "class Model(nn.Module):\n"
      "    def __init__(self):\n        super().__init__()\n"
      "        self.attn = nn.MultiheadAttention(64, 4)\n"
      "    def forward(self, x):\n        return self.attn(x, x, x)[0]\n";
  EXPECT_TRUE(AnalyzeReference(block).composite);
  EXPECT_EQ(EstimateLevel(block), 3);
}

TEST(DifficultyTest, PathWinsOverTheEstimate) {
  const char* one = "class Model(nn.Module):\n    def forward(self, x):\n        return x.relu()\n";
  Difficulty d = ClassifyDifficulty("KernelBench/level3/5_X.py", one);
  EXPECT_EQ(d.level, 3);
  EXPECT_EQ(d.category, "level3");
  EXPECT_EQ(d.source, "path");
  d = ClassifyDifficulty("examples/relu/problem.py", one);
  EXPECT_EQ(d.level, 1);
  EXPECT_EQ(d.source, "heuristic");
  EXPECT_EQ(d.op_count, 1);
  d = ClassifyDifficulty("examples/relu/problem.py", "");
  EXPECT_EQ(d.category, "unknown");
  EXPECT_EQ(d.source, "none");
}

// The estimate against the levels the built-in suite's authors gave its 34 problems.
TEST(DifficultyTest, EstimateAgreesWithTheBuiltInSuiteLevels) {
  Result<std::vector<SuiteProblem>> suite =
      DiscoverSuite(std::string(KS_SOURCE_DIR) + "/suites/kernelsmith", SuiteFilter{});
  ASSERT_TRUE(suite.ok()) << suite.status().message();
  ASSERT_GE(suite->size(), 30u);
  int agree = 0;
  std::string misses;
  for (const SuiteProblem& p : *suite) {
    Result<std::string> code = ReadFile(p.path);
    ASSERT_TRUE(code.ok());
    int estimate = EstimateLevel(*code);
    if (estimate == p.level) {
      ++agree;
    } else {
      misses += " " + p.name + "→" + std::to_string(estimate);
    }
  }
  EXPECT_GE(agree * 10, static_cast<int>(suite->size()) * 9)
      << agree << "/" << suite->size() << " agree; misses:" << misses;
}

}  // namespace
}  // namespace ks
