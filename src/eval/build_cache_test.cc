#include "eval/build_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/file.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using SysClock = std::chrono::system_clock;

bool RecordsBirthTimes(const std::string& path) {
  struct statx stx {};
  return statx(AT_FDCWD, path.c_str(), 0, STATX_BTIME, &stx) == 0 &&
         (stx.stx_mask & STATX_BTIME) != 0 && stx.stx_btime.tv_sec > 0;
}

TEST(BuildCacheTest, RootFollowsTheWorkersCacheDir) {
  EXPECT_EQ(CpuExtCacheRoot("/data/ks"), "/data/ks/cpu_ext");
  EXPECT_NE(CpuExtCacheRoot("").find("/cpu_ext"), std::string::npos);
}

TEST(BuildCacheTest, OnlyLibrariesReplacedInOldSlotsSinceTheRequestBeganAreRemoved) {
  std::string tmpl = (fs::temp_directory_path() / "ks-build-cache-XXXXXX").string();
  const std::string root = mkdtemp(tmpl.data());
  fs::create_directories(root + "/old");
  ASSERT_TRUE(WriteFileAtomic(root + "/old/libkept.so", "built").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/old/libplanted.so", "built").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto since = SysClock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(WriteFileAtomic(root + "/old/libplanted.so", "planted").ok());  // renamed over
  ASSERT_TRUE(WriteFileAtomic(root + "/old/build.log", "not a library").ok());
  fs::create_directories(root + "/fresh");  // a first build made while the request ran
  ASSERT_TRUE(WriteFileAtomic(root + "/fresh/libnew.so", "built").ok());

  std::vector<std::string> removed = RemoveReplacedBuilds(root, since);
  EXPECT_FALSE(fs::exists(root + "/old/libplanted.so"));
  EXPECT_TRUE(fs::exists(root + "/old/libkept.so"));
  EXPECT_TRUE(fs::exists(root + "/old/build.log"));
  if (RecordsBirthTimes(root)) {
    EXPECT_TRUE(fs::exists(root + "/fresh/libnew.so"));
    EXPECT_EQ(removed, std::vector<std::string>{root + "/old/libplanted.so"});
  } else {  // without creation times every library changed since is removed
    EXPECT_EQ(removed.size(), 2u);
  }
  EXPECT_TRUE(RemoveReplacedBuilds(root + "/missing", since).empty());
  fs::remove_all(root);
}

}  // namespace
}  // namespace ks
