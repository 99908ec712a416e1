#include "propose/python_lexer.h"

#include <gtest/gtest.h>

#include <string>

namespace ks {
namespace {

// One letter per byte: c code, s string, # comment.
std::string Regions(std::string_view code) {
  std::string out;
  for (PyRegion r : ClassifyPythonRegions(code)) {
    out += r == PyRegion::kCode ? 'c' : r == PyRegion::kString ? 's' : '#';
  }
  return out;
}

TEST(ParsePythonRegionsTest, StringsAndComments) {
  EXPECT_EQ(Regions("x='#'#c"), "ccsss##");
  EXPECT_EQ(Regions("s=\"a\\\"#\"\n"), "ccssssssc");  // escaped quote does not end the string
  EXPECT_EQ(Regions("t='''a\n#'''#"), "ccsssssssss#");
  EXPECT_EQ(Regions("u=\"open\nv=1"), "ccssssscccc");  // unterminated: ends with its line
}

}  // namespace
}  // namespace ks
