#include "task/task.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace ks {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(TaskTest, ProblemWithAllNamesLoads) {
  std::string path = WriteTemp("ok_problem.py",
                               "import torch\nclass Model(torch.nn.Module):\n    pass\n"
                               "def get_inputs():\n    return []\n"
                               "def get_init_inputs():\n    return []\n");
  Result<SourceFile> p = LoadProblem(path);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->sha256.size(), 64u);
}

TEST(TaskTest, ProblemMissingNamesSaysWhichAndWhere) {
  std::string path = WriteTemp("bad_problem.py", "class Modelx:\n    pass\n");
  Result<SourceFile> p = LoadProblem(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(path), std::string::npos);
  EXPECT_NE(p.status().message().find("`Model`, `get_inputs`, `get_init_inputs`"),
            std::string::npos)
      << p.status().message();
}

TEST(TaskTest, CandidateNeedsModelNew) {
  std::string path = WriteTemp("cand.py", "class Model:\n    pass\n");
  Result<SourceFile> c = LoadCandidate(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("`ModelNew`"), std::string::npos);
  EXPECT_TRUE(LoadCandidate(WriteTemp("cand2.py", "ModelNew = object\n")).ok());
}

TEST(TaskTest, TopLevelNamesAreFoundByLine) {
  EXPECT_EQ(MissingTopLevelNames("class ModelNew(nn.Module):\n", {"ModelNew"}), "");
  EXPECT_EQ(MissingTopLevelNames("x = 1\ndef  get_inputs():\n", {"get_inputs"}), "");
  EXPECT_EQ(MissingTopLevelNames("ModelNew=Model\n", {"ModelNew"}), "");
  EXPECT_EQ(MissingTopLevelNames("class ModelNewer:\n", {"ModelNew"}), "`ModelNew`");
  EXPECT_EQ(MissingTopLevelNames("    class ModelNew:\n", {"ModelNew"}), "`ModelNew`");
  EXPECT_EQ(MissingTopLevelNames("ModelNew == 1\n", {"ModelNew"}), "`ModelNew`");
  EXPECT_EQ(MissingTopLevelNames("classModelNew = 1\n", {"ModelNew"}), "`ModelNew`");
  // A reply of megabytes (whitespace after `class`, no newline) is scanned, not backtracked.
  std::string huge = "class" + std::string(4 << 20, ' ') + "X";
  EXPECT_EQ(MissingTopLevelNames(huge, {"ModelNew", "X"}), "`ModelNew`");
}

TEST(TaskTest, UnreadableFileIsNamed) {
  Result<SourceFile> p = LoadProblem("/nonexistent/problem.py");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("/nonexistent/problem.py"), std::string::npos);
}

}  // namespace
}  // namespace ks
