#include "serve/reward_function.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ks {
namespace {

TEST(RewardFunctionTest, RatioIsTheSpeedupOverTheParent) {
  RewardOptions o;
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 2.5), 2.5);
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 0.4), 0.4);  // slower but correct: still above a failure
}

TEST(RewardFunctionTest, LogRatioAddsOnePerDoubling) {
  RewardOptions o;
  o.shape = RewardShape::kLogRatio;
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 4.0), 3.0);
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 0.25), 0.0);  // floored at 0, never below a failure
  o.floor = 0.1;
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 0.25), 0.1);
}

TEST(RewardFunctionTest, ClipBoundsTheReward) {
  RewardOptions o;
  o.clip = 3;
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 10.0), 3.0);
  EXPECT_DOUBLE_EQ(RewardFromRatio(o, 2.0), 2.0);
}

TEST(RewardFunctionTest, NonsenseRatiosEarnNothing) {
  RewardOptions o;
  o.floor = 0.5;  // the floor is for correct kernels with a measured ratio only
  EXPECT_EQ(RewardFromRatio(o, 0.0), 0.0);
  EXPECT_EQ(RewardFromRatio(o, -1.0), 0.0);
  EXPECT_EQ(RewardFromRatio(o, std::nan("")), 0.0);
  EXPECT_EQ(RewardFromRatio(o, std::numeric_limits<double>::infinity()), 0.0);
}

TEST(RewardFunctionTest, ParsesAndValidatesOptions) {
  EXPECT_EQ(*ParseRewardShape("log_ratio"), RewardShape::kLogRatio);
  Result<RewardShape> bad = ParseRewardShape("linear");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("log_ratio"), std::string::npos);
  RewardOptions o;
  EXPECT_TRUE(ValidateRewardOptions(o).ok());
  o.clip = -1;
  EXPECT_NE(ValidateRewardOptions(o).message().find("--reward-clip"), std::string::npos);
}

}  // namespace
}  // namespace ks
