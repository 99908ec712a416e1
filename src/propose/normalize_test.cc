#include "propose/normalize.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

TEST(EvolveNormalizeTest, StripsCommentsWhitespaceAndBlankLines) {
  constexpr std::string_view kCode =
      "# header comment\n"
      "import torch   \n"
      "\n"
      "\n"
      "x = 1  # set x\n"
      "    # indented comment only\n"
      "y = '# not a comment'  # but this is\n"
      "z = \"it's # kept\"\n"
      "w = 'esc \\' # kept'\n";
  EXPECT_EQ(NormalizeCode(kCode),
            "import torch\n"
            "x = 1\n"
            "y = '# not a comment'\n"
            "z = \"it's # kept\"\n"
            "w = 'esc \\' # kept'\n");
}

TEST(EvolveNormalizeTest, TripleQuotedStringsKeptByteForByte) {
  constexpr std::string_view kCode =
      "src = \"\"\"\n"
      "__global__ void k() {  \n"
      "\n"
      "  # pragma unroll\n"
      "}\n"
      "\"\"\"  # done\n"
      "doc = '''a # b'''\n";
  EXPECT_EQ(NormalizeCode(kCode),
            "src = \"\"\"\n"
            "__global__ void k() {  \n"
            "\n"
            "  # pragma unroll\n"
            "}\n"
            "\"\"\"\n"
            "doc = '''a # b'''\n");
}

TEST(EvolveNormalizeTest, HashIgnoresCosmeticDifferencesOnly) {
  const std::string a = "def f(x):\n    return x * 2\n";
  const std::string b = "# a comment\r\ndef f(x):   \r\n\r\n    return x * 2  # double\r\n";
  const std::string c = "def f(x):\n    return x * 3\n";
  const std::string d = "def f(x):\n  return x * 2\n";  // indentation is meaningful
  EXPECT_EQ(CodeHash(a), CodeHash(b));
  EXPECT_NE(CodeHash(a), CodeHash(c));
  EXPECT_NE(CodeHash(a), CodeHash(d));
  EXPECT_NE(CodeHash("s = '# x'\n"), CodeHash("s = ''\n"));
  EXPECT_EQ(CodeHash(a).size(), 64u);
}

}  // namespace
}  // namespace ks
