#include <gtest/gtest.h>

#include "propose/evolve_block.h"
#include "propose/reply_parser.h"
#include "propose/test_programs.h"

namespace ks {
namespace {

using ::ks::testing::kSoftmaxSeed;

Edit Diffs(std::vector<SearchReplace> diffs) {
  Edit edit;
  edit.kind = Edit::Kind::kSearchReplace;
  edit.diffs = std::move(diffs);
  return edit;
}

Edit Rewrite(Edit::Kind kind, std::string code) {
  Edit edit;
  edit.kind = kind;
  edit.code = std::move(code);
  return edit;
}

// The text outside the EVOLVE-BLOCK, markers included.
std::string Outside(std::string_view code) {
  Result<EvolveBlock> block = FindEvolveBlock(code);
  if (!block.ok()) return "<no block>";
  return std::string(code.substr(0, block->body_begin)) + "|" +
         std::string(code.substr(block->body_end));
}

TEST(EditApplyTest, ExactDiffChangesOnlyTheBlock) {
  Result<std::string> child = ApplyEdit(
      kSoftmaxSeed, Diffs({{"        BLOCK_SIZE = 16384\n", "        BLOCK_SIZE = 4096\n"}}));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  std::string expected(kSoftmaxSeed);
  expected.replace(expected.find("16384"), 5, "4096");
  EXPECT_EQ(*child, expected);
}

TEST(EditApplyTest, TrailingWhitespaceAndIndentOffsetAreTolerated) {
  // The model quoted the lines dedented by 4 and with trailing spaces; its replacement gets the
  // block's indentation back, including a new, deeper line.
  Result<std::string> child =
      ApplyEdit(kSoftmaxSeed,
                Diffs({{"    out = torch.empty_like(x)   \n    BLOCK_SIZE = 16384\n",
                        "    out = torch.empty_like(x)\n    if x.shape[1] <= 4096:\n"
                        "        BLOCK_SIZE = 4096\n    else:\n        BLOCK_SIZE = 16384\n"}}));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_NE(child->find("        out = torch.empty_like(x)\n        if x.shape[1] <= 4096:\n"
                        "            BLOCK_SIZE = 4096\n        else:\n"
                        "            BLOCK_SIZE = 16384\n        softmax_kernel"),
            std::string::npos)
      << *child;
  EXPECT_EQ(Outside(*child), Outside(kSoftmaxSeed));
}

TEST(EditApplyTest, BlankLineDifferencesAreTolerated) {
  // The SEARCH text leaves out the two blank lines between the kernel and the class.
  Result<std::string> child = ApplyEdit(
      kSoftmaxSeed,
      Diffs({{"    tl.store(out_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=mask)\n"
              "class ModelNew(nn.Module):\n",
              "    tl.store(out_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=mask)\n"
              "\n\nclass ModelNew(nn.Module):  # tuned\n"}}));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_NE(child->find("mask=mask)\n\n\nclass ModelNew(nn.Module):  # tuned\n"),
            std::string::npos);
}

TEST(EditApplyTest, TabsVersusSpaces) {
  constexpr std::string_view kTabbed =
      "# EVOLVE-BLOCK-START\ndef f(x):\n\tif x:\n\t\treturn 1\n\treturn 0\n# EVOLVE-BLOCK-END\n";
  Result<std::string> child = ApplyEdit(
      kTabbed, Diffs({{"    if x:\n        return 1\n", "    if x > 0:\n        return 2\n"}}));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(*child,
            "# EVOLVE-BLOCK-START\ndef f(x):\n\tif x > 0:\n\t\treturn 2\n\treturn 0\n"
            "# EVOLVE-BLOCK-END\n");
}

TEST(EditApplyTest, CrlfParentKeepsCrlf) {
  constexpr std::string_view kCrlf =
      "a = 1\r\n# EVOLVE-BLOCK-START\r\nb = 2\r\nc = 3\r\n"
      "# EVOLVE-BLOCK-END\r\n";
  Result<std::string> child = ApplyEdit(kCrlf, Diffs({{"b = 2\n", "b = 20\nb2 = 21\n"}}));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(*child,
            "a = 1\r\n# EVOLVE-BLOCK-START\r\nb = 20\r\nb2 = 21\r\nc = 3\r\n"
            "# EVOLVE-BLOCK-END\r\n");
}

TEST(EditApplyTest, DiffsApplyInOrder) {
  Result<std::string> child =
      ApplyEdit("# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n",
                Diffs({{"x = 1\n", "x = 2\ny = 3\n"}, {"y = 3\n", "y = 4\n"}}));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(*child, "# EVOLVE-BLOCK-START\nx = 2\ny = 4\n# EVOLVE-BLOCK-END\n");
}

TEST(EditApplyTest, SearchForLinesAnEarlierDiffChanged) {
  Result<std::string> child = ApplyEdit("# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n",
                                        Diffs({{"x = 1\n", "x = 2\n"}, {"x = 1\n", "x = 3\n"}}));
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "SEARCH block 2 (starting `x = 1`) matched nothing inside the EVOLVE-BLOCK (lines "
            "2-2); an earlier block of this reply already changed those lines; the other 1 "
            "block(s) matched, but nothing was applied");
}

TEST(EditApplyTest, SeveralDiffsOneFailingAppliesNothing) {
  Result<std::string> child =
      ApplyEdit(kSoftmaxSeed, Diffs({{"    num = tl.exp(x)\n", "    num = tl.exp2(x)\n"},
                                     {"    BLOCK = 128\n    x = 1\n", "    BLOCK = 256\n"}}));
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "SEARCH block 2 (starting `    BLOCK = 128`) matched nothing inside the EVOLVE-BLOCK "
            "(lines 8-27); the other 1 block(s) matched, but nothing was applied");
}

TEST(EditApplyTest, NearMissIsExplained) {
  Result<std::string> child = ApplyEdit(
      kSoftmaxSeed,
      Diffs({{"    x = x - tl.max(x, axis=0)\n    num = tl.exp(x + 1)\n", "    num = 0\n"}}));
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "SEARCH block 1 (starting `    x = x - tl.max(x, axis=0)`) matched nothing inside the "
            "EVOLVE-BLOCK (lines 8-27); its first line matches line 14, but SEARCH line 2 "
            "`num = tl.exp(x + 1)` differs from `num = tl.exp(x)` (line 15)");
}

TEST(EditApplyTest, IndentationOffsetMustBeUniform) {
  // Same lines, but the SEARCH flattens the nesting: Python semantics differ, so no match.
  Result<std::string> child = ApplyEdit(
      kSoftmaxSeed, Diffs({{"    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
                            "    out = torch.empty_like(x)\n",
                            "    def forward(self, x):\n    out = torch.empty_like(x)\n"}}));
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "SEARCH block 1 (starting `    def forward(self, x: torch.Tensor) -> torch.Tensor:`) "
            "matched nothing inside the EVOLVE-BLOCK (lines 8-27); its lines occur from line 23 "
            "but with different relative indentation");
}

TEST(EditApplyTest, AmbiguousSearchSaysHowMany) {
  Result<std::string> child =
      ApplyEdit("# EVOLVE-BLOCK-START\nx = 1\ny = 2\nx = 1\n# EVOLVE-BLOCK-END\n",
                Diffs({{"x = 1\n", "x = 5\n"}}));
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "SEARCH block 1 (starting `x = 1`) matches 2 places inside the EVOLVE-BLOCK (lines 2, "
            "4); add context lines to make it unique");
}

TEST(EditApplyTest, EditsOutsideTheBlockAreRejected) {
  Result<std::string> child =
      ApplyEdit(kSoftmaxSeed, Diffs({{"import triton\n", "import triton as tr\n"}}));
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "SEARCH block 1 (starting `import triton`) matches line 3, outside the EVOLVE-BLOCK "
            "(lines 8-27); only code between the markers may change");
  Result<std::string> marker = ApplyEdit(
      kSoftmaxSeed, Diffs({{"        return out\n", "        return out\n# EVOLVE-BLOCK-END\n"}}));
  ASSERT_FALSE(marker.ok());
  EXPECT_EQ(marker.status().message(),
            "REPLACE block 1 adds an EVOLVE-BLOCK marker line; markers must stay as they are");
}

TEST(EditApplyTest, MarkerQuotedAsAnchorOnBothSides) {
  Result<std::string> child =
      ApplyEdit(kSoftmaxSeed, Diffs({{"        return out\n# EVOLVE-BLOCK-END\n",
                                      "        return out.contiguous()\n"
                                      "# EVOLVE-BLOCK-END\n"}}));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_NE(child->find("        return out.contiguous()\n# EVOLVE-BLOCK-END\n"),
            std::string::npos);
}

TEST(EditApplyTest, EmptySearchAndNoOpAreRejected) {
  EXPECT_EQ(ApplyEdit(kSoftmaxSeed, Diffs({{"\n\n", "x = 1\n"}})).status().message(),
            "SEARCH block 1 is empty; quote the exact lines to replace");
  EXPECT_EQ(ApplyEdit(kSoftmaxSeed, Diffs({{"    num = tl.exp(x)\n", "    num = tl.exp(x)\n"}}))
                .status()
                .message(),
            "the edit leaves the program unchanged");
}

TEST(EditApplyTest, DedentedBlockRewriteIsReindented) {
  constexpr std::string_view kParent =
      "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
      "    # EVOLVE-BLOCK-START\n    def forward(self, x):\n        return x * 2\n"
      "    # EVOLVE-BLOCK-END\n";
  // The block comes back at column 0, with the class line shown as context.
  Result<Edit> edit = ParseReply(
      "```python\nclass ModelNew(nn.Module):\n# EVOLVE-BLOCK-START\ndef forward(self, x):\n"
      "    return x + x\n# EVOLVE-BLOCK-END\n```");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  Result<std::string> child = ApplyEdit(kParent, *edit);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(*child,
            "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
            "    # EVOLVE-BLOCK-START\n    def forward(self, x):\n        return x + x\n"
            "    # EVOLVE-BLOCK-END\n");
}

TEST(EditApplyTest, RewriteThatChangesOutsideCodeIsRejected) {
  std::string rewritten(kSoftmaxSeed);
  rewritten.replace(rewritten.find("import triton\n"), 14, "import triton  # jit\nimport math\n");
  rewritten.replace(rewritten.find("16384"), 5, "8192");
  Result<std::string> child =
      ApplyEdit(kSoftmaxSeed, Rewrite(Edit::Kind::kBlockRewrite, rewritten));
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "the rewrite changes code outside the EVOLVE-BLOCK (`import triton  # jit` is not in "
            "the original there); keep that code as it is and change only the lines between the "
            "markers");
}

TEST(EditApplyTest, WholeFileRewriteKeepsOutsideBytes) {
  // Reformatted outside code (trailing spaces, extra blank lines) is accepted; the child keeps
  // the parent's bytes there.
  std::string rewritten(kSoftmaxSeed);
  rewritten.replace(rewritten.find("import torch\n"), 13, "import torch   \n\n");
  rewritten.replace(rewritten.find("16384"), 5, "8192");
  Result<std::string> child =
      ApplyEdit(kSoftmaxSeed, Rewrite(Edit::Kind::kBlockRewrite, rewritten));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  std::string expected(kSoftmaxSeed);
  expected.replace(expected.find("16384"), 5, "8192");
  EXPECT_EQ(*child, expected);
}

TEST(EditApplyTest, RewriteThatDropsTheMarkers) {
  std::string dropped(kSoftmaxSeed);
  dropped.erase(dropped.find("# EVOLVE-BLOCK-START\n"), 21);
  dropped.erase(dropped.find("# EVOLVE-BLOCK-END\n"), 19);
  dropped.replace(dropped.find("num_warps=8"), 11, "num_warps=16");
  Result<Edit> edit = ParseReply("```python\n" + dropped + "```\n");
  ASSERT_TRUE(edit.ok()) << edit.status().ToString();
  ASSERT_EQ(edit->kind, Edit::Kind::kFileRewrite);
  Result<std::string> child = ApplyEdit(kSoftmaxSeed, *edit);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  std::string expected(kSoftmaxSeed);
  expected.replace(expected.find("num_warps=8"), 11, "num_warps=16");
  EXPECT_EQ(*child, expected);

  // Without markers and with the outside code changed, nothing can be trusted.
  dropped.replace(dropped.find("BLOCK_OUTSIDE = 128"), 19, "BLOCK_OUTSIDE = 64");
  child = ApplyEdit(kSoftmaxSeed, Rewrite(Edit::Kind::kFileRewrite, dropped));
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().message(),
            "the rewrite drops the EVOLVE-BLOCK markers and changes code outside them "
            "(`BLOCK_OUTSIDE = 128` of the original is missing or altered); send the EVOLVE-BLOCK "
            "with its marker lines");
}

TEST(EditApplyTest, ParentWithoutBlock) {
  EXPECT_EQ(ApplyEdit("x = 1\n", Diffs({{"x = 1\n", "x = 2\n"}})).status().message(),
            "the parent program: no `# EVOLVE-BLOCK-START` / `# EVOLVE-BLOCK-END` markers found; "
            "mark the editable region with them");
}

}  // namespace
}  // namespace ks
