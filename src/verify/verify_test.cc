#include "verify/verify.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

EvalResult Timed(double speedup, double lo, double hi, nlohmann::json independent) {
  EvalResult r;
  r.status = EvalStatus::kOk;
  r.speedup = speedup;
  r.speedup_ci_lo = lo;
  r.speedup_ci_hi = hi;
  r.stages["timing"] = {{"ok", true}, {"independent", std::move(independent)}};
  return r;
}

TEST(VerifyTest, OverlappingIntervalsAgree) {
  VerifyOutcome v = VerifyFromResult(
      Timed(2.0, 1.98, 2.02,
            {{"method", "do_bench_cudagraph"}, {"speedup", 2.01}, {"speedup_range", {2.0, 2.03}}}));
  EXPECT_TRUE(v.agree);
  EXPECT_TRUE(v.ok());
  EXPECT_NEAR(v.difference, 0.005, 1e-9);
  EXPECT_EQ(v.method, "do_bench_cudagraph");
  EXPECT_NE(FormatVerify(v).find("verdict      agree"), std::string::npos);
}

TEST(VerifyTest, AGapBeyondBothIntervalsDiffers) {
  // the evaluator's figure 9 % above a steady-state harness: what verify exists to catch
  VerifyOutcome v = VerifyFromResult(
      Timed(7.7, 7.6, 7.8, {{"method", "m"}, {"speedup", 7.05}, {"speedup_range", {7.0, 7.1}}}));
  EXPECT_FALSE(v.agree);
  EXPECT_FALSE(v.ok());
  EXPECT_NE(FormatVerify(v).find("DIFFER"), std::string::npos);
  EXPECT_FALSE(v.ToJson()["agree"].get<bool>());
}

TEST(VerifyTest, NoIndependentFigureIsNotAnAgreement) {
  VerifyOutcome v = VerifyFromResult(Timed(2.0, 1.9, 2.1, {{"error", "RuntimeError: boom"}}));
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.independent_error, "RuntimeError: boom");
  EXPECT_NE(FormatVerify(v).find("independent  none: RuntimeError: boom"), std::string::npos);
  EvalResult failed = EvalResult::Failure(EvalStatus::kIncorrect, "trial 0: mismatch");
  EXPECT_FALSE(VerifyFromResult(failed).ok());
  EXPECT_NE(FormatVerify(VerifyFromResult(failed)).find("incorrect"), std::string::npos);
}

TEST(VerifyTest, WithoutIntervalsTwoPercentIsTheBar) {
  EvalResult r = Timed(2.0, 0, 0, {{"method", "m"}, {"speedup", 2.03}});
  r.speedup_ci_lo.reset();
  r.speedup_ci_hi.reset();
  EXPECT_TRUE(VerifyFromResult(r).agree);
  r.stages["timing"]["independent"]["speedup"] = 2.1;
  EXPECT_FALSE(VerifyFromResult(r).agree);
}

}  // namespace
}  // namespace ks
