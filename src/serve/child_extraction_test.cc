#include "serve/child_extraction.h"

#include <gtest/gtest.h>

#include <string>

#include "propose/test_programs.h"

namespace ks {
namespace {

using testing::kSoftmaxSeed;

TEST(ChildExtractionTest, AppliesADiffToTheParentsBlock) {
  std::string reply =
      "<think>bigger blocks waste lanes</think>\nTry fewer warps:\n```\n<<<<<<< SEARCH\n"
      "        softmax_kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK_SIZE=BLOCK_SIZE, "
      "num_warps=8)\n=======\n"
      "        softmax_kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK_SIZE=BLOCK_SIZE, "
      "num_warps=4)\n>>>>>>> REPLACE\n```\n";
  Result<ChildProgram> child = ExtractChild(reply, kSoftmaxSeed);
  ASSERT_TRUE(child.ok()) << child.status().message();
  EXPECT_EQ(child->edit_kind, "search_replace");
  EXPECT_NE(child->code.find("num_warps=4"), std::string::npos);
  EXPECT_EQ(child->code.find("num_warps=8"), std::string::npos);
  EXPECT_NE(child->code.find("BLOCK_OUTSIDE = 128"), std::string::npos);  // outside kept
}

TEST(ChildExtractionTest, ReportsWhyAReplyIsUnusable) {
  Result<ChildProgram> prose = ExtractChild("I would use shared memory here.", kSoftmaxSeed);
  ASSERT_FALSE(prose.ok());
  EXPECT_NE(prose.status().message().find("no code block"), std::string::npos);
  std::string miss = "<<<<<<< SEARCH\nnot in the program\n=======\nx = 1\n>>>>>>> REPLACE\n";
  Result<ChildProgram> unmatched = ExtractChild(miss, kSoftmaxSeed);
  ASSERT_FALSE(unmatched.ok());
  EXPECT_NE(unmatched.status().message().find("matched nothing"), std::string::npos);
}

TEST(ChildExtractionTest, ATranslationIsAWholeFileDefiningModelNew) {
  Result<ChildProgram> file = ExtractChild(
      "```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    pass\n```", "");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->edit_kind, "translation");
  EXPECT_NE(file->code.find("class ModelNew"), std::string::npos);
  Result<ChildProgram> diff =
      ExtractChild("<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n", "");
  ASSERT_FALSE(diff.ok());
  EXPECT_NE(diff.status().message().find("whole file"), std::string::npos);
  Result<ChildProgram> nameless = ExtractChild("```python\nclass Other:\n    pass\n```", "");
  ASSERT_FALSE(nameless.ok());
  EXPECT_NE(nameless.status().message().find("ModelNew"), std::string::npos);
}

TEST(ChildExtractionTest, ResponseOfQueryDropsThePrompt) {
  EXPECT_EQ(ResponseOfQuery("<s>user: go</s>assistant: done", "<s>user: go</s>"), "assistant: done");
  EXPECT_EQ(ResponseOfQuery("whole text", "other prompt"), "whole text");
  EXPECT_EQ(ResponseOfQuery("whole text", ""), "whole text");
}

}  // namespace
}  // namespace ks
