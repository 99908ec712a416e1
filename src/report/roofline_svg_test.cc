#include "report/roofline_svg.h"

#include <gtest/gtest.h>

#include "report/report.h"
#include "report/report_data.h"

namespace ks {
namespace {

// 2 GFLOP over 8 MB on a device of 1 TB/s and 100 TFLOP/s (fp32): intensity 250 FLOP/B,
// ridge 100: compute-bound, floor 20 us.
Roofline Matmul() {
  nlohmann::json j = {
      {"work", {{"flops", {{"fp32", 2e9}}}, {"bytes", 8e6}}},
      {"peaks",
       {{"device", "GPU"},
        {"bw_bytes_per_s", 1e12},
        {"flops_per_s", {{"fp32", 100e12}}},
        {"launch_us", 3.0}}},
      {"candidate_torch", {{"flops", 1.9e9}, {"bytes", 0}, {"ops", {{"aten.mul", 1}}}}}};
  return **ParseRoofline(j, 200.0, 40.0);
}

TEST(RooflineSvgTest, PlotsRoofAndOnePointPerTimedMark) {
  Roofline r = Matmul();
  std::string svg = SvgRoofline(r, {{"reference", 200}, {"seed", 0}, {"best", 40}}, "p <1>");
  EXPECT_NE(svg.find("<title>p &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("1 TB/s, 100 TFLOP/s"), std::string::npos) << svg;
  size_t points = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) {
    ++points;
  }
  EXPECT_EQ(points, 4u);  // two points and two legend dots: the untimed seed is left out
  EXPECT_NE(svg.find("best: 40.00 us"), std::string::npos);
  EXPECT_EQ(RooflineSummary(r, {{"reference", 200}, {"best", 40}}),
            "floor 20.00 us (compute, fp32); reference 10%, best 50% of the floor");
}

TEST(RooflineSvgTest, NoFlopsGivesBandwidthBarsAndNoFloorSaysSo) {
  nlohmann::json j = {{"work", {{"flops", nlohmann::json::object()}, {"bytes", 4e6}}},
                      {"peaks", {{"bw_bytes_per_s", 1e12}, {"flops_per_s", {{"fp32", 1e13}}}}}};
  Roofline copy = **ParseRoofline(j, 10.0, 8.0);
  std::string svg = SvgRoofline(copy, {{"reference", 10}, {"best", 8}}, "copy");
  EXPECT_NE(svg.find("data movement only"), std::string::npos);
  EXPECT_NE(svg.find("best 50%"), std::string::npos) << svg;  // 4 MB in 8 us = 0.5 TB/s
  EXPECT_NE(SvgRoofline(Roofline{}, {{"best", 8}}, "x").find("no roofline"), std::string::npos);
}

TEST(RooflineSvgTest, ReportShowsThePlotAndTheLazyFlag) {
  ReportData d;
  ProblemReport p;
  p.name = "level1/1_Matmul";
  p.roofline = Matmul();
  p.ref_us = 200;
  p.seed_us = 100;
  p.best_us = 40;
  p.best_lazy = p.roofline->lazy->lazy;
  d.problems.push_back(p);
  std::string html = BuildReportHtml(d);
  EXPECT_NE(html.find("<h2>Roofline (measured peaks)</h2>"), std::string::npos);
  EXPECT_NE(html.find("class=\"chart roofline\""), std::string::npos);
  EXPECT_NE(html.find("reference 10%, seed 20%, best 50% of the floor"), std::string::npos);
  EXPECT_NE(html.find("<b>lazy optimization</b>"), std::string::npos);
  d.problems[0].roofline.reset();
  EXPECT_EQ(BuildReportHtml(d).find("Roofline (measured peaks)"), std::string::npos);
}

}  // namespace
}  // namespace ks
