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

CaseResult Case(std::string name, double weight, std::string status,
                std::optional<double> speedup = std::nullopt) {
  CaseResult c;
  c.name = std::move(name);
  c.weight = weight;
  c.status = std::move(status);
  c.speedup = speedup;
  return c;
}

TEST(FeedbackTest, TimedCasesGiveThePerShapeSpeedups) {
  EvalResult r;
  r.status = EvalStatus::kOk;
  r.speedup = 1.1;
  r.cases = {Case("batch 256", 1, "ok", 2.1), Case("batch 1", 3, "ok", 0.8)};
  std::string fb = BuildFeedback(r);
  EXPECT_NE(fb.find("Per shape: 2.10x at batch 256 (weight 1), 0.80x at batch 1 (weight 3); the "
                    "speedup is their weighted geometric mean."),
            std::string::npos)
      << fb;
}

TEST(FeedbackTest, FailedCasesAreNamed) {
  EvalResult r = EvalResult::Failure(EvalStatus::kIncorrect, "case batch 256: trial 0: values");
  r.cases = {Case("batch 1", 1, "ok"), Case("batch 256", 1, "incorrect"),
             Case("prefill", 1, "not_run")};
  std::string fb = BuildFeedback(r);
  EXPECT_NE(fb.find("Per shape (3 cases, each must be correct): batch 1 correct, batch 256 "
                    "incorrect, prefill not evaluated."),
            std::string::npos)
      << fb;
}

TEST(FeedbackTest, PlainProblemHasNoPerShapeLine) {
  EvalResult r;
  r.status = EvalStatus::kOk;
  r.speedup = 1.5;
  EXPECT_EQ(BuildFeedback(r).find("Per shape"), std::string::npos);
}

TEST(FeedbackTest, LastLines) {
  EXPECT_EQ(LastLines("a\nb\nc\n", 2), "b\nc");
  EXPECT_EQ(LastLines("a\nb", 5), "a\nb");
  EXPECT_EQ(LastLines("", 3), "");
}

}  // namespace
}  // namespace ks
