#include "propose/reply_parser.h"

#include <gtest/gtest.h>

#include <chrono>

#include "propose/test_programs.h"

namespace ks {
namespace {

using ::ks::testing::kSoftmaxSeed;

TEST(ParseReplyTest, SeveralDiffsInsideFences) {
  Result<Edit> edit = ParseReply(
      "I'll lower the warp count and fuse the subtraction.\n\n"
      "```python\n"
      "<<<<<<< SEARCH\n"
      "        softmax_kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK_SIZE=BLOCK_SIZE, "
      "num_warps=8)\n"
      "=======\n"
      "        softmax_kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK_SIZE=BLOCK_SIZE, "
      "num_warps=4)\n"
      ">>>>>>> REPLACE\n"
      "```\n"
      "and\n"
      "```\n"
      "<<<<<<< SEARCH\n"
      "    num = tl.exp(x)\n"
      "=======\n"
      "    num = tl.exp2(x * 1.4426950408889634)\n"
      "    # base-2 exponent\n"
      ">>>>>>> REPLACE\n"
      "```\n");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_EQ(edit->kind, Edit::Kind::kSearchReplace);
  EXPECT_EQ(EditKindName(edit->kind), "search_replace");
  ASSERT_EQ(edit->diffs.size(), 2u);
  EXPECT_EQ(edit->diffs[1].search, "    num = tl.exp(x)\n");
  EXPECT_EQ(edit->diffs[1].replace,
            "    num = tl.exp2(x * 1.4426950408889634)\n    # base-2 exponent\n");
  Result<std::string> child = ApplyEdit(kSoftmaxSeed, *edit);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_NE(child->find("num_warps=4)"), std::string::npos);
  EXPECT_NE(child->find("tl.exp2(x * 1.4426950408889634)\n    # base-2"), std::string::npos);
}

TEST(ParseReplyTest, CrlfReplyParsesAndApplies) {
  Result<Edit> edit = ParseReply(
      "<<<<<<< SEARCH\r\n        BLOCK_SIZE = 16384\r\n=======\r\n        BLOCK_SIZE = 8192\r\n"
      ">>>>>>> REPLACE\r\n");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  ASSERT_EQ(edit->diffs.size(), 1u);
  EXPECT_EQ(edit->diffs[0].search, "        BLOCK_SIZE = 16384\n");
  Result<std::string> child = ApplyEdit(kSoftmaxSeed, *edit);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_NE(child->find("        BLOCK_SIZE = 8192\n"), std::string::npos);
  EXPECT_EQ(child->find('\r'), std::string::npos);
}

TEST(ParseReplyTest, ReasoningWithFakeCodeIsIgnored) {
  Result<Edit> edit = ParseReply(
      "<think>Maybe:\n```python\n# EVOLVE-BLOCK-START\nFAKE = 1\n# EVOLVE-BLOCK-END\n```\n"
      "or a diff\n<<<<<<< SEARCH\nnothing\n=======\nfake\n>>>>>>> REPLACE\n</think>\n"
      "Final answer:\n```python\n# EVOLVE-BLOCK-START\nREAL = 2\n# EVOLVE-BLOCK-END\n```\n");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_EQ(edit->kind, Edit::Kind::kBlockRewrite);
  EXPECT_EQ(edit->code, "# EVOLVE-BLOCK-START\nREAL = 2\n# EVOLVE-BLOCK-END\n");
}

TEST(ParseReplyTest, ReasoningWhoseOpeningTagWasInThePrompt) {
  EXPECT_EQ(StripReasoning("thinking ```x```</think>\nanswer"), "\nanswer");
  EXPECT_EQ(StripReasoning("a<thinking>b</thinking>c<think>d</think>e"), "ace");
  Result<Edit> edit = ParseReply("<think>I will try things and never finish ```python\nx = 1\n");
  ASSERT_FALSE(edit.ok());
  EXPECT_EQ(edit.status().message(),
            "the reply ends inside an unclosed <think> section; no answer followed the reasoning");
}

TEST(ParseReplyTest, EmptyAndProseOnlyReplies) {
  EXPECT_EQ(ParseReply("").status().message(), "the reply is empty");
  EXPECT_EQ(ParseReply(" \n\t\n").status().message(), "the reply is empty");
  EXPECT_EQ(ParseReply("You could raise num_warps to 16 for better occupancy.").status().message(),
            "the reply contains no code block and no SEARCH/REPLACE diff");
  EXPECT_EQ(ParseReply("<think>a</think>").status().message(),
            "the reply contains no code block and no SEARCH/REPLACE diff");
}

TEST(ParseReplyTest, CodeWithoutMarkersOrModelNewIsRejected) {
  Result<Edit> edit = ParseReply("Change this:\n```python\nnum = tl.exp2(x)\n```\n");
  ASSERT_FALSE(edit.ok());
  EXPECT_EQ(edit.status().message(),
            "the reply's code blocks hold neither the `# EVOLVE-BLOCK-START` / "
            "`# EVOLVE-BLOCK-END` markers nor `class ModelNew`; send the whole EVOLVE-BLOCK with "
            "its marker lines, or SEARCH/REPLACE diffs");
}

TEST(ParseReplyTest, PicksTheLastRewriteAndItsKind) {
  Result<Edit> edit = ParseReply(
      "Old version:\n```python\n# EVOLVE-BLOCK-START\nV = 1\n# EVOLVE-BLOCK-END\n```\n"
      "New version:\n```py\n# EVOLVE-BLOCK-START\nV = 2\n# EVOLVE-BLOCK-END\n```\n"
      "The key line:\n```python\nV = 2\n```\n");
  ASSERT_TRUE(edit.ok());
  EXPECT_EQ(edit->kind, Edit::Kind::kBlockRewrite);
  EXPECT_EQ(edit->code, "# EVOLVE-BLOCK-START\nV = 2\n# EVOLVE-BLOCK-END\n");

  Result<Edit> file =
      ParseReply("```python\nimport torch\nclass ModelNew(nn.Module):\n    pass\n```");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->kind, Edit::Kind::kFileRewrite);
  EXPECT_EQ(EditKindName(file->kind), "file_rewrite");
  EXPECT_EQ(file->code, "import torch\nclass ModelNew(nn.Module):\n    pass\n");
}

TEST(ParseReplyTest, UnfencedBlockIsAccepted) {
  Result<Edit> edit =
      ParseReply("Here it is\n# EVOLVE-BLOCK-START\nV = 3\n# EVOLVE-BLOCK-END\nHope it helps.");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  EXPECT_EQ(edit->kind, Edit::Kind::kBlockRewrite);
  EXPECT_EQ(edit->code, "# EVOLVE-BLOCK-START\nV = 3\n# EVOLVE-BLOCK-END\n");
}

TEST(ParseReplyTest, TruncatedRewriteNamesTheMissingMarker) {
  Result<Edit> edit =
      ParseReply("```python\nimport torch\n# EVOLVE-BLOCK-START\nclass ModelNew:\n");
  ASSERT_FALSE(edit.ok());
  EXPECT_EQ(edit.status().message(),
            "in the reply's code: `# EVOLVE-BLOCK-START` on line 2 has no `# EVOLVE-BLOCK-END` "
            "after it");
}

TEST(ParseReplyTest, MalformedDiffs) {
  EXPECT_EQ(ParseReply("<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n").status().message(),
            "SEARCH/REPLACE block 1 (reply line 1) has no `=======` line between SEARCH and "
            "REPLACE");
  EXPECT_EQ(ParseReply("ok\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\nc\n"
                       "=======\nd")
                .status()
                .message(),
            "SEARCH/REPLACE block 2 (reply line 8) is not closed by `>>>>>>> REPLACE` (was the "
            "reply cut off?)");
}

TEST(ParseReplyTest, EnormousReplyParsesInLinearTime) {
  std::string reply;
  for (int i = 0; i < 100000; ++i) {
    reply += "Line " + std::to_string(i) + " of analysis: the kernel is memory bound ``x``.\n";
  }
  reply +=
      "```python\n<<<<<<< SEARCH\n    num = tl.exp(x)\n=======\n    num = tl.exp2(x)\n"
      ">>>>>>> REPLACE\n```\n";
  ASSERT_GT(reply.size(), 5'000'000u);
  const auto start = std::chrono::steady_clock::now();
  Result<Edit> edit = ParseReply(reply);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  ASSERT_EQ(edit->diffs.size(), 1u);
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 2000);
  Result<std::string> child = ApplyEdit(kSoftmaxSeed, *edit);
  ASSERT_TRUE(child.ok());
  EXPECT_NE(child->find("tl.exp2(x)"), std::string::npos);
}

}  // namespace
}  // namespace ks
