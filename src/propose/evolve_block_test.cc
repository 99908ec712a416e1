#include "propose/evolve_block.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

constexpr std::string_view kIndented = R"PY(import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    # EVOLVE-BLOCK-START
    def forward(self, x):
        return x * 2
    # EVOLVE-BLOCK-END


def get_inputs():
    return []
)PY";

TEST(EvolveBlockTest, FindsIndentedBlock) {
  Result<EvolveBlock> block = FindEvolveBlock(kIndented);
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  EXPECT_EQ(block->start_line, 8);
  EXPECT_EQ(block->end_line, 11);
  EXPECT_EQ(block->marker_indent, "    ");
  EXPECT_EQ(block->newline, "\n");
  EXPECT_EQ(block->Body(kIndented), "    def forward(self, x):\n        return x * 2\n");
  EXPECT_EQ(
      kIndented.substr(block->start_marker_begin, block->body_begin - block->start_marker_begin),
      "    # EVOLVE-BLOCK-START\n");
  EXPECT_EQ(kIndented.substr(block->body_end, block->end_marker_end - block->body_end),
            "    # EVOLVE-BLOCK-END\n");
}

TEST(EvolveBlockTest, MarkerLineVariants) {
  EXPECT_EQ(ClassifyMarkerLine("# EVOLVE-BLOCK-START"), EvolveMarker::kStart);
  EXPECT_EQ(ClassifyMarkerLine("\t\t#EVOLVE-BLOCK-END  "), EvolveMarker::kEnd);
  EXPECT_EQ(ClassifyMarkerLine("  ## EVOLVE-BLOCK-START (the tuner edits here)"),
            EvolveMarker::kStart);
  EXPECT_EQ(ClassifyMarkerLine("x = 1  # EVOLVE-BLOCK-START"), EvolveMarker::kNone);
  EXPECT_EQ(ClassifyMarkerLine("# EVOLVE-BLOCK-STARTED"), EvolveMarker::kNone);
  EXPECT_EQ(ClassifyMarkerLine("EVOLVE-BLOCK-START"), EvolveMarker::kNone);
}

TEST(EvolveBlockTest, NoMarkers) {
  Result<EvolveBlock> block = FindEvolveBlock("x = 1\n");
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(block.status().message(),
            "no `# EVOLVE-BLOCK-START` / `# EVOLVE-BLOCK-END` markers found; mark the editable "
            "region with them");
}

TEST(EvolveBlockTest, SeveralBlocksNameTheirLines) {
  Result<EvolveBlock> block = FindEvolveBlock(
      "# EVOLVE-BLOCK-START\na = 1\n# EVOLVE-BLOCK-END\n\n# EVOLVE-BLOCK-START\nb = 2\n"
      "# EVOLVE-BLOCK-END\n");
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.status().message(),
            "found 2 `# EVOLVE-BLOCK-START` markers (lines 1, 5) and 2 `# EVOLVE-BLOCK-END` "
            "markers (lines 3, 7); exactly one EVOLVE-BLOCK is expected");
}

TEST(EvolveBlockTest, UnpairedMarkers) {
  EXPECT_EQ(FindEvolveBlock("x = 1\n    # EVOLVE-BLOCK-START\ny = 2\n").status().message(),
            "`# EVOLVE-BLOCK-START` on line 2 has no `# EVOLVE-BLOCK-END` after it");
  EXPECT_EQ(FindEvolveBlock("# EVOLVE-BLOCK-END\n").status().message(),
            "`# EVOLVE-BLOCK-END` on line 1 has no `# EVOLVE-BLOCK-START` before it");
  EXPECT_EQ(FindEvolveBlock("# EVOLVE-BLOCK-END\nx\n# EVOLVE-BLOCK-START\n").status().message(),
            "`# EVOLVE-BLOCK-END` on line 1 comes before `# EVOLVE-BLOCK-START` on line 3");
}

TEST(EvolveBlockTest, MarkersInsideStringsAreNotMarkers) {
  constexpr std::string_view kCode =
      "PROMPT = \"\"\"\n# EVOLVE-BLOCK-START\n\"\"\"\n# EVOLVE-BLOCK-START\nx = 1\n"
      "# EVOLVE-BLOCK-END\n";
  Result<EvolveBlock> block = FindEvolveBlock(kCode);
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  EXPECT_EQ(block->start_line, 4);
  EXPECT_EQ(block->Body(kCode), "x = 1\n");
}

TEST(EvolveBlockTest, ReplaceKeepsOutsideByteIdenticalAndReindents) {
  // The model returned the body dedented to column 0; it goes back to the block's indentation.
  Result<std::string> out =
      ReplaceEvolveBlock(kIndented, "def forward(self, x):\n\n    return x * 3\n");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  Result<EvolveBlock> old_block = FindEvolveBlock(kIndented);
  Result<EvolveBlock> new_block = FindEvolveBlock(*out);
  ASSERT_TRUE(new_block.ok());
  EXPECT_EQ(new_block->Body(*out), "    def forward(self, x):\n\n        return x * 3\n");
  EXPECT_EQ(out->substr(0, new_block->body_begin), kIndented.substr(0, old_block->body_begin));
  EXPECT_EQ(out->substr(new_block->body_end), kIndented.substr(old_block->body_end));
}

TEST(EvolveBlockTest, ReplaceKeepsBodyAlreadyIndentedAndAddsFinalNewline) {
  Result<std::string> out =
      ReplaceEvolveBlock(kIndented, "    def forward(self, x):\n        return x");
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->find("    def forward(self, x):\n        return x\n    # EVOLVE-BLOCK-END\n"),
            std::string::npos);
}

TEST(EvolveBlockTest, ReplaceDoesNotShiftTopLevelBodies) {
  // A block whose code starts at column 0 keeps column 0.
  constexpr std::string_view kTop =
      "import x\n# EVOLVE-BLOCK-START\ndef f():\n    pass\n"
      "# EVOLVE-BLOCK-END\n";
  Result<std::string> out = ReplaceEvolveBlock(kTop, "def g():\n    return 1\n");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "import x\n# EVOLVE-BLOCK-START\ndef g():\n    return 1\n# EVOLVE-BLOCK-END\n");
}

TEST(EvolveBlockTest, ReplaceFollowsCrlfFiles) {
  constexpr std::string_view kCrlf =
      "a = 1\r\n# EVOLVE-BLOCK-START\r\nb = 2\r\n# EVOLVE-BLOCK-END\r\n";
  Result<std::string> out = ReplaceEvolveBlock(kCrlf, "b = 3\nc = 4\n");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "a = 1\r\n# EVOLVE-BLOCK-START\r\nb = 3\r\nc = 4\r\n# EVOLVE-BLOCK-END\r\n");
}

TEST(EvolveBlockTest, ReplaceRejectsMarkersInBody) {
  Result<std::string> out = ReplaceEvolveBlock(kIndented, "x = 1\n# EVOLVE-BLOCK-END\n");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "the new EVOLVE-BLOCK body holds a marker line (line 2: `# EVOLVE-BLOCK-END`); send "
            "only the code between the markers");
  EXPECT_FALSE(ReplaceEvolveBlock("no block here\n", "x\n").ok());
}

}  // namespace
}  // namespace ks
