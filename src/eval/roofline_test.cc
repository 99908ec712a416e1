#include "eval/roofline.h"

#include <gtest/gtest.h>

#include "eval/eval_result.h"
#include "eval/feedback.h"

namespace ks {
namespace {

// An H100-like device: 3 TB/s, tf32 400 TFLOP/s, launch 4 us.
nlohmann::json Peaks() {
  return {
      {"device", "NVIDIA H100 80GB HBM3"},
      {"bw_bytes_per_s", 3e12},
      {"flops_per_s", {{"fp32", 50e12}, {"tf32", 400e12}, {"bf16", 800e12}}},
      {"launch_us", 4.0},
      {"measure_s", 2.1},
      {"cached", false},
      {"datasheet",
       {{"name", "H100 SXM"}, {"bw_bytes_per_s", 3.35e12}, {"flops_per_s", {{"tf32", 494.7e12}}}}}};
}

// A 4096^3 fp32 matmul with TF32: 137.4 GFLOP, 201 MB.
nlohmann::json MatmulWorker() {
  double n = 4096;
  return {{"work", {{"flops", {{"tf32", 2 * n * n * n}}}, {"bytes", 3 * n * n * 4}}},
          {"peaks", Peaks()},
          {"candidate_torch", {{"flops", 0}, {"bytes", 0}, {"ops", nlohmann::json::object()}}},
          {"custom_device_share", 0.97},
          {"error", nullptr}};
}

TEST(RooflineTest, ComputeBoundMatmulFloorAndPercentages) {
  auto r = ParseRoofline(MatmulWorker(), 2000.0, 686.0);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->has_value());
  const Roofline& rl = **r;
  double flops = 2.0 * 4096 * 4096 * 4096;
  EXPECT_NEAR(rl.compute_us, flops / 400e12 * 1e6, 1e-6);               // 343.6 us
  EXPECT_NEAR(rl.memory_us, 3.0 * 4096 * 4096 * 4 / 3e12 * 1e6, 1e-6);  // 67.1 us
  EXPECT_DOUBLE_EQ(rl.floor_us, rl.compute_us);
  EXPECT_EQ(rl.bound, "compute");
  EXPECT_EQ(rl.compute_class, "tf32");
  ASSERT_TRUE(rl.cand && rl.ref);
  EXPECT_NEAR(rl.cand->pct_of_floor, 100 * rl.floor_us / 686.0, 1e-9);  // ~50%
  EXPECT_NEAR(rl.cand->flops_pct, rl.cand->pct_of_floor, 1e-9);
  EXPECT_NEAR(rl.ref->pct_of_floor, 100 * rl.floor_us / 2000.0, 1e-9);
  ASSERT_TRUE(rl.lazy);
  EXPECT_FALSE(rl.lazy->lazy);
  EXPECT_DOUBLE_EQ(*rl.lazy->custom_flops_share, 1.0);
}

TEST(RooflineTest, MemoryAndLaunchLatencyBounds) {
  nlohmann::json j = MatmulWorker();
  j["work"] = {{"flops", {{"fp32", 5e6}}}, {"bytes", 8e9}};  // softmax-like: bytes dominate
  auto r = ParseRoofline(j, std::nullopt, 3000.0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->bound, "memory");
  EXPECT_NEAR((*r)->floor_us, 8e9 / 3e12 * 1e6, 1e-6);
  EXPECT_NEAR((*r)->cand->bw_pct, 100 * (*r)->floor_us / 3000.0, 1e-9);
  EXPECT_FALSE((*r)->ref);
  j["work"] = {{"flops", {{"fp32", 1e3}}}, {"bytes", 4096}};  // 1.4 ns of bytes < 4 us launch
  r = ParseRoofline(j, 10.0, 8.0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->bound, "launch-latency");
  EXPECT_NE(RooflineFeedback(**r).find("launch overhead"), std::string::npos);
}

TEST(RooflineTest, ClassWithoutMeasuredPeakUsesFp32) {
  nlohmann::json j = MatmulWorker();
  j["work"] = {{"flops", {{"fp16", 1e12}}}, {"bytes", 1}};  // no fp16 peak measured
  auto r = ParseRoofline(j, std::nullopt, 1e6);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR((*r)->compute_us, 1e12 / 50e12 * 1e6, 1e-6);
}

TEST(RooflineTest, FeedbackSaysFloorBoundAndPeak) {
  auto r = ParseRoofline(MatmulWorker(), 2000.0, 686.0);
  ASSERT_TRUE(r.ok());
  std::string fb = RooflineFeedback(**r);
  EXPECT_NE(fb.find("candidate 686.00 us; floor 343.60 us (compute, tf32); at 50% of the floor, "
                    "50% of peak tf32 FLOP/s, 9.8% of peak memory bandwidth"),
            std::string::npos)
      << fb;
  EXPECT_NE(fb.find("the reference (2000.00 us) is at 17% of the floor"), std::string::npos) << fb;
  EXPECT_NE(fb.find("measured peaks of NVIDIA H100 80GB HBM3: 3 TB/s bandwidth, tf32 400 TFLOP/s"),
            std::string::npos)
      << fb;
  EXPECT_EQ(fb.find("Lazy"), std::string::npos);
}

TEST(RooflineTest, LazyCandidateIsFlaggedAsInformation) {
  nlohmann::json j = MatmulWorker();
  j["work"] = {{"flops", {{"fp32", 6000}}}, {"bytes", 8000}};
  j["candidate_torch"] = {
      {"flops", 5000}, {"bytes", 40000}, {"ops", {{"aten.sin", 1}, {"aten.mul", 2}}}};
  j["custom_device_share"] = nullptr;
  auto r = ParseRoofline(j, 10.0, 9.0);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE((*r)->lazy);
  EXPECT_TRUE((*r)->lazy->lazy);
  EXPECT_NEAR(*(*r)->lazy->custom_flops_share, 1.0 / 6, 1e-9);
  EXPECT_DOUBLE_EQ(*(*r)->lazy->custom_bytes_share, 0.0);
  std::string fb = RooflineFeedback(**r);
  EXPECT_NE(fb.find("Lazy optimization (information, not a reject): the custom kernels cover 17% "
                    "of the problem's FLOPs; torch ops (aten.mul x2, aten.sin x1) do the rest"),
            std::string::npos)
      << fb;
  EXPECT_NE(fb.find("not measured on this backend"), std::string::npos);
  // A candidate doing half the FLOPs itself is not lazy.
  j["candidate_torch"]["flops"] = 3000;
  r = ParseRoofline(j, 10.0, 9.0);
  EXPECT_FALSE((*r)->lazy->lazy);
}

TEST(RooflineTest, MalformedPartsAreProtocolErrorsNamingTheField) {
  nlohmann::json j = MatmulWorker();
  j["work"]["flops"]["tf32"] = "many";
  auto r = ParseRoofline(j, 1.0, 1.0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("work.flops.tf32"), std::string::npos);
  j = MatmulWorker();
  j["peaks"].erase("bw_bytes_per_s");
  r = ParseRoofline(j, 1.0, 1.0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("peaks.bw_bytes_per_s"), std::string::npos);
  // In an EvalResult the evaluation stands and the roofline keeps the reason.
  auto result = EvalResult::FromJson({{"status", "ok"}, {"roofline", j}});
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(result->roofline);
  EXPECT_NE(result->roofline->error.find("peaks.bw_bytes_per_s"), std::string::npos);
  EXPECT_FALSE(result->roofline->has_floor());
  auto none = ParseRoofline(nullptr, 1.0, 1.0);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(RooflineTest, EvalResultRoundTripKeepsTheFigures) {
  nlohmann::json worker = {{"status", "ok"},
                           {"speedup", 2.9},
                           {"ref_us", 2000.0},
                           {"cand_us", 686.0},
                           {"roofline", MatmulWorker()}};
  auto first = EvalResult::FromJson(worker);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(first->roofline);
  nlohmann::json stored = first->ToJson();
  EXPECT_EQ(stored["roofline"]["bound"], "compute");
  EXPECT_NEAR(stored["roofline"]["cand"]["pct_of_floor"].get<double>(), 50.09, 0.01);
  auto again = EvalResult::FromJson(stored);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->ToJson()["roofline"], stored["roofline"]);
  EXPECT_NE(BuildFeedback(*again).find("floor 343.60 us (compute, tf32)"), std::string::npos);
  EXPECT_DOUBLE_EQ(*again->roofline->lazy->custom_device_share, 0.97);
}

}  // namespace
}  // namespace ks
