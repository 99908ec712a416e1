#include "eval/eval_result.h"

#include <gtest/gtest.h>

namespace ks {
namespace {

TEST(EvalResultTest, RoundTripKeepsEveryField) {
  EvalResult r;
  r.status = EvalStatus::kHacked;
  r.message = "torch ops";
  r.backend = "triton";
  r.problem = {"p.py", "aa"};
  r.candidate = {"c.py", "bb"};
  r.speedup = 2.5;
  r.speedup_ci_lo = 2.4;
  r.speedup_ci_hi = 2.6;
  r.ref_us = 10;
  r.cand_us = 4;
  r.cv = 0.001;
  r.findings.push_back({"torch_compute", "aten.mm x1", "reject"});
  r.stages["load"] = {{"ok", true}};
  r.device = {{"name", "H100"}};
  r.duration_s = 1.5;
  r.device_seconds = 0.9;
  r.gpu_seconds = 1.2;
  r.stderr_tail = "err";
  r.feedback = "fb";

  nlohmann::json j = r.ToJson();
  EXPECT_EQ(j["schema_version"], kEvalResultSchemaVersion);
  Result<EvalResult> back = EvalResult::FromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), j);
  EXPECT_DOUBLE_EQ(back->gpu_seconds, 1.2);
  // A result stored before gpu_seconds existed reads as 0.
  EXPECT_EQ(EvalResult::FromJson({{"status", "ok"}})->gpu_seconds, 0);
}

TEST(EvalResultTest, BaselineComparisonRoundTrips) {
  Result<EvalResult> r = EvalResult::FromJson(
      {{"status", "ok"},
       {"speedup", nullptr},
       {"vs_baseline",
        {{"path", "p7.py"}, {"speedup", 1.03}, {"speedup_ci95", {1.02, 1.04}},
         {"baseline_us", 10.3}, {"cand_us", 10.0}}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->vs_baseline.has_value());
  EXPECT_EQ(r->vs_baseline->path, "p7.py");
  EXPECT_DOUBLE_EQ(r->vs_baseline->speedup, 1.03);
  EXPECT_DOUBLE_EQ(*r->vs_baseline->speedup_ci_lo, 1.02);
  EXPECT_DOUBLE_EQ(*r->vs_baseline->cand_us, 10.0);
  Result<EvalResult> back = EvalResult::FromJson(r->ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ToJson(), r->ToJson());
  EXPECT_TRUE(EvalResult::FromJson({{"status", "ok"}})->ToJson()["vs_baseline"].is_null());
  // A comparison without its speedup is not silently dropped.
  EXPECT_FALSE(EvalResult::FromJson({{"status", "ok"}, {"vs_baseline", {{"path", "x"}}}}).ok());
}

TEST(EvalResultTest, CasesRoundTripAndStayAbsentForAPlainProblem) {
  Result<EvalResult> r =
      EvalResult::FromJson({{"status", "ok"},
                            {"speedup", 1.2},
                            {"cases",
                             {{{"name", "batch 1"},
                               {"weight", 3},
                               {"status", "ok"},
                               {"message", ""},
                               {"speedup", 0.8},
                               {"speedup_ci95", {0.79, 0.81}},
                               {"ref_us", 8.0},
                               {"cand_us", 10.0},
                               {"cv", 0.01},
                               {"stages", {{"correctness", {{"passed", 5}}}}},
                               {"roofline", nullptr}},
                              {{"name", "prefill"}, {"weight", 1}, {"status", "not_run"}}}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->cases.size(), 2u);
  EXPECT_EQ(r->cases[0].name, "batch 1");
  EXPECT_DOUBLE_EQ(r->cases[0].weight, 3);
  EXPECT_DOUBLE_EQ(*r->cases[0].speedup, 0.8);
  EXPECT_DOUBLE_EQ(*r->cases[0].speedup_ci_hi, 0.81);
  EXPECT_EQ(r->cases[0].stages["correctness"]["passed"], 5);
  EXPECT_EQ(r->cases[1].status, "not_run");
  EXPECT_FALSE(r->cases[1].speedup.has_value());
  Result<EvalResult> back = EvalResult::FromJson(r->ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ToJson(), r->ToJson());
  EXPECT_FALSE(EvalResult::FromJson({{"status", "ok"}})->ToJson().contains("cases"));
  // A case the engine cannot read is an error, not a silently shorter table.
  EXPECT_FALSE(EvalResult::FromJson({{"status", "ok"}, {"cases", {1}}}).ok());
  EXPECT_FALSE(
      EvalResult::FromJson({{"status", "ok"}, {"cases", {{{"name", "a"}, {"status", "meh"}}}}})
          .ok());
}

TEST(EvalResultTest, MissingOrUnknownStatusIsAProtocolError) {
  Result<EvalResult> r = EvalResult::FromJson({{"speedup", 1.0}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kProtocol);
  EXPECT_NE(r.status().message().find("status"), std::string::npos);
  EXPECT_FALSE(EvalResult::FromJson({{"status", "fast"}}).ok());
  EXPECT_FALSE(EvalResult::FromJson(nlohmann::json::array()).ok());
}

TEST(EvalResultTest, NullTimingFieldsStayEmpty) {
  Result<EvalResult> r =
      EvalResult::FromJson({{"status", "incorrect"}, {"speedup", nullptr}, {"cv", nullptr}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, EvalStatus::kIncorrect);
  EXPECT_FALSE(r->speedup.has_value());
  EXPECT_TRUE(r->ToJson()["speedup"].is_null());
}

TEST(EvalResultTest, StatusNamesRoundTrip) {
  for (EvalStatus s : {EvalStatus::kOk, EvalStatus::kCompileError, EvalStatus::kRuntimeError,
                       EvalStatus::kIncorrect, EvalStatus::kHacked, EvalStatus::kTimeout,
                       EvalStatus::kCrash, EvalStatus::kInfraError}) {
    Result<EvalStatus> back = ParseEvalStatus(EvalStatusName(s));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
}

}  // namespace
}  // namespace ks
