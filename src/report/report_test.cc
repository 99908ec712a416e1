#include "report/report.h"

#include <gtest/gtest.h>

#include "report/diff.h"
#include "report/html.h"

namespace ks {
namespace {

std::string Ops(const std::vector<DiffLine>& d) {
  std::string s;
  for (const DiffLine& l : d) s += l.op;
  return s;
}

TEST(LineDiffTest, IdenticalTextsKeepEveryLine) {
  EXPECT_EQ(Ops(LineDiff("a\nb\nc\n", "a\nb\nc\n")), "   ");
}

TEST(LineDiffTest, ChangedLineIsRemovedThenAdded) {
  std::vector<DiffLine> d = LineDiff("a\nB = 1\nc", "a\nB = 16\nc");
  EXPECT_EQ(Ops(d), " -+ ");
  EXPECT_EQ(d[1].text, "B = 1");
  EXPECT_EQ(d[2].text, "B = 16");
}

TEST(LineDiffTest, InsertionsAndDeletionsFollowTheLcs) {
  EXPECT_EQ(Ops(LineDiff("x\na\nb\nc", "a\nb\ny\nc\nz")), "-  + +");
  EXPECT_EQ(Ops(LineDiff("", "a\nb")), "++");
  EXPECT_EQ(Ops(LineDiff("a\nb", "")), "--");
  EXPECT_TRUE(LineDiff("", "").empty());
}

TEST(LineDiffTest, FallsBackAboveTheCellLimit) {
  EXPECT_EQ(Ops(LineDiff("k\na\nb\nk", "k\nb\na\nk", 4)), " --++ ");
}

TEST(HtmlTest, EscapesEverySpecialCharacter) {
  EXPECT_EQ(HtmlEscape("a<b && c>\"d'"), "a&lt;b &amp;&amp; c&gt;&quot;d&#39;");
}

TEST(HtmlTest, TableEscapesCellsAndPadsRows) {
  std::string t = HtmlTable({"h<1>", "h2"}, {{"<script>"}});
  EXPECT_NE(t.find("<th>h&lt;1&gt;</th>"), std::string::npos);
  EXPECT_NE(t.find("<td>&lt;script&gt;</td><td></td>"), std::string::npos);
  EXPECT_EQ(t.find("<script>"), std::string::npos);
}

TEST(HtmlTest, DiffBlockEscapesCode) {
  std::string h = DiffHtml(LineDiff("#include <a>\n", "#include <b> // x & y\n"));
  EXPECT_NE(h.find("<pre class=\"diff\">"), std::string::npos);
  EXPECT_NE(h.find("<span class=\"del\">-#include &lt;a&gt;</span>"), std::string::npos);
  EXPECT_NE(h.find("<span class=\"add\">+#include &lt;b&gt; // x &amp; y</span>"),
            std::string::npos);
}

TEST(SvgTest, CurveWithOnePointIsADot) {
  ChartOptions o;
  o.title = "a<b";
  std::string svg = SvgLineChart({{"p&q", {1.5}}}, o);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("<circle"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("a&lt;b"), std::string::npos);
  EXPECT_NE(svg.find("p&amp;q"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("http"), std::string::npos);
}

TEST(SvgTest, SeveralPointsMakeOnePolylineWithAxisLabels) {
  std::string svg = SvgLineChart({{"s", {0, 1, 2.5}}}, ChartOptions{});
  EXPECT_NE(svg.find("points=\"60.0,235.0 300.0,"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<circle"), std::string::npos);
  EXPECT_NE(svg.find(">round</text>"), std::string::npos);
  EXPECT_NE(svg.find(">best speedup</text>"), std::string::npos);
}

TEST(SvgTest, EmptySeriesSaysNoData) {
  EXPECT_NE(SvgLineChart({}, ChartOptions{}).find("no data"), std::string::npos);
  EXPECT_NE(SvgLineChart({{"empty", {}}}, ChartOptions{}).find("no data"), std::string::npos);
}

TEST(ReportHtmlTest, EmptyLevelsStillGiveAWholePage) {
  ReportData d;
  d.run_dir = "runs/<x>";
  std::string html = BuildReportHtml(d);
  EXPECT_NE(html.find("<!DOCTYPE html>"), std::string::npos);
  EXPECT_NE(html.find("No levels."), std::string::npos);
  EXPECT_NE(html.find("<th>fast_1.5</th>"), std::string::npos);
  EXPECT_NE(html.find("runs/&lt;x&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(ReportHtmlTest, ShowsGroupsProblemsAndEscapedDiff) {
  ReportData d;
  d.is_bench = true;
  d.groups.emplace_back("level1", nlohmann::json{{"problems", 1},
                                                 {"corr", 1.0},
                                                 {"geomean_speedup", 1.25},
                                                 {"corr_round1", 0.0},
                                                 {"series", {1.0, 1.25}}});
  ProblemReport p;
  p.name = "level1/1_A";
  p.status = "finished";
  p.best_speedup = 1.25;
  p.series = {1.0, 1.25};
  p.candidates_by_status = {{"ok", 2}, {"incorrect", 1}};
  p.base_code = "x = a < b\n";
  p.best_code = "x = a && b\n";
  p.base_label = "seed p1";
  p.best_label = "best p2";
  d.problems.push_back(p);
  d.devices.push_back({{"name", "H100 <sxm>"}, {"torch", "2.5"}});
  std::string html = BuildReportHtml(d);
  EXPECT_NE(html.find("<td>level1</td><td>1</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>100.0%</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>1.250</td>"), std::string::npos);
  EXPECT_NE(html.find("incorrect 1, ok 2"), std::string::npos);
  EXPECT_NE(html.find("-x = a &lt; b"), std::string::npos);
  EXPECT_NE(html.find("+x = a &amp;&amp; b"), std::string::npos);
  EXPECT_NE(html.find("H100 &lt;sxm&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<sxm>"), std::string::npos);
}

TEST(ReportHtmlTest, ShowsTheReMeasuredBestAndWhetherItAgrees) {
  ReportData d;
  ProblemReport p;
  p.name = "run";
  p.best_code = "y = 1\n";
  p.best_label = "best p2";
  p.verify = nlohmann::json{{"status", "ok"},
                            {"speedup", 2.0},
                            {"speedup_ci95", {1.9, 2.1}},
                            {"independent_speedup", 2.5},
                            {"independent_method", "do_bench_cudagraph"},
                            {"agree", false}};
  d.problems.push_back(p);
  std::string html = BuildReportHtml(d);
  EXPECT_NE(html.find("evaluator 2.000x [1.900, 2.100], independent 2.500x (do_bench_cudagraph): "
                      "<b>differ</b>"),
            std::string::npos);
  d.problems[0].verify = nlohmann::json{{"status", "incorrect"}, {"message", "trial 2 <off>"}};
  html = BuildReportHtml(d);
  EXPECT_NE(html.find("Re-measured in a fresh worker: incorrect (trial 2 &lt;off&gt;)"),
            std::string::npos);
}

TEST(ReportHtmlTest, TheProblemTableShowsTheVerifiedSpeedupAndMarksWhereItDoesNotConfirm) {
  ReportData d;
  d.is_bench = true;
  ProblemReport a;
  a.name = "level1/1_A";
  a.status = "finished";
  a.best_speedup = 2.0;
  a.best_code = "y = 1\n";
  a.verify = nlohmann::json{{"state", "verified"},
                            {"status", "ok"},
                            {"speedup", 1.5},
                            {"speedup_ci95", {1.45, 1.55}},
                            {"independent_speedup", 1.5},
                            {"independent_range", {1.48, 1.52}},
                            {"independent_method", "wall_clock_loop"},
                            {"agree", true},
                            {"recorded_speedup", 2.0},
                            {"recorded_within", false}};
  ProblemReport b;
  b.name = "level1/2_B";
  b.status = "finished";
  b.best_code = "z = 1\n";
  b.verify = nlohmann::json{{"state", "not_verified"}, {"reason", "the best kernel is the seed"}};
  d.problems = {a, b};
  std::string html = BuildReportHtml(d);
  EXPECT_NE(html.find("<th>verified speedup</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>1.500x [1.450, 1.550]</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>1.500x [1.480, 1.520] (wall_clock_loop)</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>\u2717 NOT REPRODUCED: the run&#39;s 2.000x"), std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>not verified: the best kernel is the seed</td>"), std::string::npos);
  // under the kernels: the re-measurement of the first only
  EXPECT_NE(html.find("Re-measured in a fresh worker: evaluator 1.500x"), std::string::npos);
  EXPECT_EQ(html.find("Re-measured in a fresh worker: ?"), std::string::npos);
}

}  // namespace
}  // namespace ks
