#include "cli/eval_runner_setup.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace ks {
namespace {

TEST(SlotsPerGpuFor, SpreadsTheWorkersOverTheGpusRoundingUp) {
  EXPECT_EQ(SlotsPerGpuFor(0, 0), 1);  // no GPU, no count given: one CPU worker
  EXPECT_EQ(SlotsPerGpuFor(3, 0), 3);  // no GPU: the count is the total
  EXPECT_EQ(SlotsPerGpuFor(0, 4), 1);  // default: one worker per GPU
  EXPECT_EQ(SlotsPerGpuFor(4, 4), 1);
  EXPECT_EQ(SlotsPerGpuFor(5, 4), 2);  // at least 5 workers over 4 GPUs: 8
  EXPECT_EQ(SlotsPerGpuFor(8, 2), 4);
  EXPECT_EQ(SlotsPerGpuFor(2, 8), 1);  // fewer workers than GPUs: still every GPU
}

TEST(GpusFor, GivenListIsParsedAndCpuBackendUsesNone) {
  Result<std::vector<int>> given = GpusFor("1,3", "triton");
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(*given, (std::vector<int>{1, 3}));
  Result<std::vector<int>> cpu = GpusFor("", "cpu");
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(cpu->empty());
  EXPECT_FALSE(GpusFor("x", "triton").ok());
}

TEST(GpusFor, DefaultFollowsCudaVisibleDevices) {
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string saved = old ? old : "";
  setenv("CUDA_VISIBLE_DEVICES", "5,6,7", 1);
  Result<std::vector<int>> all = GpusFor("", "");
  if (old)
    setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else
    unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<int>{0, 1, 2}));  // indices within the visible set
}

}  // namespace
}  // namespace ks
