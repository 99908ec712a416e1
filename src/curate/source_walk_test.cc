#include "curate/source_walk.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "store/test_util.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using store_testing::ScratchDir;

void Touch(const std::string& path, const std::string& text = "x = 1\n") {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

std::vector<std::string> Rels(const Result<std::vector<CurateSourceFile>>& files) {
  std::vector<std::string> out;
  EXPECT_TRUE(files.ok()) << files.status().message();
  if (files.ok()) {
    for (const CurateSourceFile& f : *files) out.push_back(f.rel);
  }
  return out;
}

TEST(SourceWalkTest, TakesPythonFilesSortedAndSkipsTestsVenvsHiddenAndBuildDirs) {
  ScratchDir dir;
  std::string r = dir.File("repo");
  for (const char* rel : {"b.py", "a/m.py", "a/z.py", "notes.txt", "tests/t.py", "a/test_x.py",
                          "a/x_test.py", "conftest.py", ".git/hooks/h.py", "__pycache__/c.py",
                          "build/lib/m.py", "env1/lib/v.py", "pkg.egg-info/s.py", ".hidden.py"}) {
    Touch(r + "/" + rel);
  }
  Touch(r + "/env1/pyvenv.cfg");
  EXPECT_EQ(Rels(WalkSources({r})), (std::vector<std::string>{"a/m.py", "a/z.py", "b.py"}));
  SourceWalkOptions with_tests;
  with_tests.skip_tests = false;
  EXPECT_EQ(Rels(WalkSources({r}, with_tests)),
            (std::vector<std::string>{"a/m.py", "a/test_x.py", "a/x_test.py", "a/z.py", "b.py",
                                      "conftest.py", "tests/t.py"}));
}

TEST(SourceWalkTest, RootsKeepTheirOrderAndSymlinkedDirsAreNotFollowed) {
  ScratchDir dir;
  Touch(dir.File("r2/a.py"));
  Touch(dir.File("r1/z.py"));
  fs::create_directory_symlink(dir.File("r2"), dir.File("r1/link"));
  Result<std::vector<CurateSourceFile>> got = WalkSources({dir.File("r2") + "/", dir.File("r1")});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].rel, "a.py");
  EXPECT_EQ((*got)[0].root_index, 0);
  EXPECT_EQ((*got)[0].root, dir.File("r2"));
  EXPECT_EQ((*got)[1].path, dir.File("r1/z.py"));
  EXPECT_EQ((*got)[1].root_index, 1);
}

TEST(SourceWalkTest, LargeFilesAreLeftOutAndAMissingRootIsNamed) {
  ScratchDir dir;
  Touch(dir.File("r/big.py"), std::string(5000, '#'));
  Touch(dir.File("r/small.py"));
  SourceWalkOptions o;
  o.max_file_bytes = 1000;
  EXPECT_EQ(Rels(WalkSources({dir.File("r")}, o)), (std::vector<std::string>{"small.py"}));
  Result<std::vector<CurateSourceFile>> missing = WalkSources({dir.File("nope")});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope: not a directory"), std::string::npos);
}

}  // namespace
}  // namespace ks
