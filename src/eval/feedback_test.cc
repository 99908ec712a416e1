#include "eval/feedback.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

TEST(FeedbackTest, CorrectCandidateShowsSpeedupAndNoise) {
  EvalResult r;
  r.status = EvalStatus::kOk;
  r.speedup = 1.84;
  r.ref_us = 40.0;
  r.cand_us = 21.7;
  r.speedup_ci_lo = 1.83;
  r.speedup_ci_hi = 1.85;
  r.stages["correctness"] = {{"trials", 5}, {"passed", 5}, {"max_abs_err", 1e-7},
                             {"max_rel_err", 2e-6}, {"atol", 0.01}, {"rtol", 0.01}};
  std::string fb = BuildFeedback(r);
  EXPECT_NE(fb.find("correct"), std::string::npos);
  EXPECT_NE(fb.find("5/5 trials"), std::string::npos);
  EXPECT_NE(fb.find("1.840x"), std::string::npos);
  EXPECT_NE(fb.find("95% CI 1.830-1.850"), std::string::npos);
}

TEST(FeedbackTest, CompileErrorCarriesLogTail) {
  EvalResult r = EvalResult::Failure(EvalStatus::kCompileError, "SyntaxError in candidate");
  std::string log;
  for (int i = 0; i < 100; ++i) log += "line " + std::to_string(i) + "\n";
  r.stages["load"] = {{"ok", false}, {"error", "SyntaxError: invalid syntax"}, {"log_tail", log}};
  std::string fb = BuildFeedback(r);
  EXPECT_NE(fb.find("SyntaxError: invalid syntax"), std::string::npos);
  EXPECT_NE(fb.find("line 99"), std::string::npos);
  EXPECT_EQ(fb.find("line 10\n"), std::string::npos) << "only the tail is kept";
}

TEST(FeedbackTest, FindingsAndMismatchAreSpelledOut) {
  EvalResult r = EvalResult::Failure(EvalStatus::kHacked, "torch ops in forward");
  r.findings.push_back({"torch_compute", "aten._softmax x1", "reject"});
  r.stages["correctness"] = {{"trials", 5}, {"passed", 4}, {"max_abs_err", 0.5},
                             {"max_rel_err", 0.9}, {"atol", 0.01}, {"rtol", 0.01},
                             {"first_mismatch", {{"trial", 3}, {"index", {1, 2}},
                                                 {"expected", 0.1}, {"actual", 0.6}}}};
  std::string fb = BuildFeedback(r);
  EXPECT_NE(fb.find("Audit [reject] torch_compute: aten._softmax x1"), std::string::npos);
  EXPECT_NE(fb.find("trial 3 at index [1,2]: expected 0.1, got 0.6"), std::string::npos);
}

TEST(FeedbackTest, LastLines) {
  EXPECT_EQ(LastLines("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(LastLines("a\nb", 5), "a\nb");
  EXPECT_EQ(LastLines("", 3), "");
}

}  // namespace
}  // namespace ks
