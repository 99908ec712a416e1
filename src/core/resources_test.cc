#include "core/resources.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace ks {
namespace {
namespace fs = std::filesystem;

class ResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ks-resources-" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "bin");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(ResourcesTest, InstalledLayoutBesideBin) {
  fs::create_directories(root_ / "share/kernelsmith/prompts");
  fs::create_directories(root_ / "share/kernelsmith/python/kernelsmith_worker");
  Result<Resources> r = FindResourcesFor((root_ / "bin/kernelsmith").string(), "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->dir, (root_ / "share/kernelsmith").string());
  EXPECT_EQ(r->prompts_dir, (root_ / "share/kernelsmith/prompts").string());
  EXPECT_EQ(r->python_dir, (root_ / "share/kernelsmith/python").string());
}

TEST_F(ResourcesTest, PipLayoutHasNoPythonDir) {
  fs::create_directories(root_ / "share/kernelsmith/prompts");
  Result<Resources> r = FindResourcesFor((root_ / "bin/kernelsmith").string(), "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->python_dir, "");  // the packages live in the interpreter's site-packages
}

TEST_F(ResourcesTest, BuildTreeLayout) {
  fs::create_directories(root_ / "bin/share/kernelsmith/prompts");
  Result<Resources> r = FindResourcesFor((root_ / "bin/kernelsmith").string(), "");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->dir, (root_ / "bin/share/kernelsmith").string());
}

TEST_F(ResourcesTest, OverrideWinsAndIsChecked) {
  fs::create_directories(root_ / "share/kernelsmith/prompts");
  fs::create_directories(root_ / "dev/prompts");
  Result<Resources> r =
      FindResourcesFor((root_ / "bin/kernelsmith").string(), (root_ / "dev").string());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->dir, (root_ / "dev").string());

  Result<Resources> bad =
      FindResourcesFor((root_ / "bin/kernelsmith").string(), (root_ / "nowhere").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("KS_RESOURCE_DIR="), std::string::npos);
}

TEST_F(ResourcesTest, MissingNamesEveryPlaceLookedAt) {
  Result<Resources> r = FindResourcesFor((root_ / "bin/kernelsmith").string(), "");
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_NE(m.find((root_ / "share/kernelsmith/prompts").string()), std::string::npos) << m;
  EXPECT_NE(m.find((root_ / "bin/share/kernelsmith/prompts").string()), std::string::npos) << m;
  EXPECT_NE(m.find("KS_RESOURCE_DIR"), std::string::npos) << m;
}

TEST(ResourcesOfThisBinaryTest, BuildTreeFindsTheSources) {
  Result<Resources> r = FindResources();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(fs::is_regular_file(fs::path(r->prompts_dir) / "cpu/system.md"));
  EXPECT_TRUE(fs::is_regular_file(fs::path(r->python_dir) / "kernelsmith_worker/__main__.py"));
}

}  // namespace
}  // namespace ks
