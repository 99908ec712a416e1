#include "verify/verify_cells.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

nlohmann::json Verified(bool agree, double difference, bool recorded_within) {
  return {{"state", "verified"},
          {"status", "ok"},
          {"speedup", 1.5},
          {"speedup_ci95", {1.45, 1.55}},
          {"independent_speedup", 1.5 * (1 + difference)},
          {"independent_range", {1.4, 1.6}},
          {"independent_method", "wall_clock_loop"},
          {"agree", agree},
          {"difference", difference},
          {"recorded_speedup", 1.52},
          {"recorded_within", recorded_within}};
}

TEST(VerifyCellsTest, AgreeingFiguresAreShownWithTheirIntervalsAndNotFlagged) {
  VerifyCells c = DescribeVerify(Verified(true, 0.01, true));
  EXPECT_EQ(c.remeasured, "1.500x [1.450, 1.550]");
  EXPECT_EQ(c.independent, "1.515x [1.400, 1.600]");
  EXPECT_EQ(c.method, "wall_clock_loop");
  EXPECT_EQ(c.verdict, "agree (+1.0 %)");
  EXPECT_FALSE(c.flagged);
}

TEST(VerifyCellsTest, MethodsThatDifferAreFlagged) {
  VerifyCells c = DescribeVerify(Verified(false, -0.09, true));
  EXPECT_TRUE(c.flagged);
  EXPECT_EQ(c.verdict, "DIFFER: the independent figure is -9.0 % off");
}

TEST(VerifyCellsTest, ARecordedFigureOutsideTheReMeasurementIsFlaggedEvenWhenMethodsAgree) {
  nlohmann::json v = Verified(true, 0.0, false);
  v["recorded_speedup"] = 2.0;
  VerifyCells c = DescribeVerify(v);
  EXPECT_TRUE(c.flagged);
  EXPECT_EQ(c.verdict, "NOT REPRODUCED: the run's 2.000x is outside the re-measured interval");
}

TEST(VerifyCellsTest, AKernelThatFailsAgainOrHasNoIndependentFigureIsFlagged) {
  VerifyCells failed = DescribeVerify(
      {{"state", "verified"}, {"status", "incorrect"}, {"message", "trial 1: mismatch"}});
  EXPECT_TRUE(failed.flagged);
  EXPECT_EQ(failed.verdict, "re-evaluated incorrect: trial 1: mismatch");
  EXPECT_EQ(failed.remeasured, "-");
  nlohmann::json v = Verified(false, 0, true);
  v.erase("independent_speedup");
  v["independent_error"] = "RuntimeError: boom";
  VerifyCells none = DescribeVerify(v);
  EXPECT_TRUE(none.flagged);
  EXPECT_EQ(none.verdict, "no independent figure: RuntimeError: boom");
}

TEST(VerifyCellsTest, NotVerifiedSaysWhyAndOnlyAFailureIsFlagged) {
  VerifyCells seed =
      DescribeVerify({{"state", "not_verified"}, {"reason", "the best is the seed"}});
  EXPECT_FALSE(seed.flagged);
  EXPECT_EQ(seed.verdict, "not verified: the best is the seed");
  VerifyCells failed = DescribeVerify({{"state", "failed"}, {"reason", "no worker"}});
  EXPECT_TRUE(failed.flagged);
  EXPECT_EQ(failed.verdict, "verify failed: no worker");
  EXPECT_EQ(DescribeVerify(nullptr).verdict, "not verified yet");
}

TEST(VerifyCellsTest, AVerifyJsonWithoutStateIsAReMeasurement) {
  nlohmann::json v = Verified(true, 0.0, true);
  v.erase("state");
  EXPECT_EQ(DescribeVerify(v).remeasured, "1.500x [1.450, 1.550]");
}

}  // namespace
}  // namespace ks
