#include "bench/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ks {
namespace {

constexpr double kEps = 1e-12;

ProblemOutcome Outcome(std::string name, int level, std::optional<double> best,
                       std::optional<double> round1, std::vector<double> series = {}) {
  ProblemOutcome o;
  o.name = std::move(name);
  o.level = level;
  o.best_speedup = best;
  o.round1_speedup = round1;
  o.best_by_round = std::move(series);
  return o;
}

TEST(MetricsTest, MixedSetCountsFailuresInTheDenominatorAndThresholdsAreStrict) {
  // 2.0 is exactly p=2.0 and 1.2 exactly p=1.2: neither counts as faster than p.
  MetricSet m = ComputeMetricSet({2.0, 1.2, 0.5, std::nullopt});
  EXPECT_EQ(m.problems, 4);
  EXPECT_EQ(m.correct, 3);
  EXPECT_NEAR(*m.corr, 0.75, kEps);
  EXPECT_NEAR(*m.fast[0], 0.5, kEps);                                 // 2.0, 1.2 > 1.0
  EXPECT_NEAR(*m.fast[1], 0.25, kEps);                                // 2.0 > 1.2
  EXPECT_NEAR(*m.fast[2], 0.25, kEps);                                // 2.0 > 1.5
  EXPECT_NEAR(*m.fast[3], 0.0, kEps);                                 // nothing > 2.0
  EXPECT_NEAR(*m.avg_amsr, (2.0 + 1.2) / 4, kEps);                    // 0.5 and the failure count 0
  EXPECT_NEAR(*m.geomean_speedup, std::cbrt(2.0 * 1.2 * 0.5), kEps);  // correct ones only
}

TEST(MetricsTest, SpeedupExactlyOneIsCorrectNotFastAndCountsInAmsr) {
  MetricSet m = ComputeMetricSet({1.0});
  EXPECT_NEAR(*m.corr, 1.0, kEps);
  EXPECT_NEAR(*m.fast[0], 0.0, kEps);
  EXPECT_NEAR(*m.avg_amsr, 1.0, kEps);
  EXPECT_NEAR(*m.geomean_speedup, 1.0, kEps);
}

TEST(MetricsTest, AllFailedGivesZerosAndNoGeomean) {
  MetricSet m = ComputeMetricSet({std::nullopt, std::nullopt});
  EXPECT_EQ(m.problems, 2);
  EXPECT_NEAR(*m.corr, 0.0, kEps);
  for (const auto& f : m.fast) EXPECT_NEAR(*f, 0.0, kEps);
  EXPECT_NEAR(*m.avg_amsr, 0.0, kEps);
  EXPECT_FALSE(m.geomean_speedup.has_value());
}

TEST(MetricsTest, EmptySetHasNoFigures) {
  MetricSet m = ComputeMetricSet({});
  EXPECT_EQ(m.problems, 0);
  EXPECT_FALSE(m.corr.has_value());
  EXPECT_FALSE(m.fast[0].has_value());
  EXPECT_FALSE(m.avg_amsr.has_value());
  EXPECT_FALSE(m.geomean_speedup.has_value());
}

TEST(MetricsTest, LevelsOverallRound1AndSkippedProblems) {
  ProblemOutcome skipped = Outcome("level2/b", 2, std::nullopt, std::nullopt);
  skipped.skipped = true;
  BenchMetrics b = ComputeBenchMetrics({
      Outcome("level1/a", 1, 3.0, 1.1, {0.0, 1.1, 3.0}),
      Outcome("level1/b", 1, std::nullopt, std::nullopt, {0.0, 0.0, 0.0}),
      skipped,
      Outcome("level3/c", 3, 1.6, 1.6, {1.6}),
  });
  ASSERT_EQ(b.levels.size(), 3u);
  const GroupMetrics& l1 = b.levels.at(1);
  EXPECT_EQ(l1.problems, 2);
  EXPECT_NEAR(*l1.final_round.corr, 0.5, kEps);
  EXPECT_NEAR(*l1.final_round.fast[3], 0.5, kEps);  // 3.0 > 2.0
  EXPECT_NEAR(*l1.final_round.avg_amsr, 1.5, kEps);
  EXPECT_NEAR(*l1.round1.fast[0], 0.5, kEps);  // 1.1 > 1.0
  EXPECT_NEAR(*l1.round1.fast[1], 0.0, kEps);  // 1.1 <= 1.2
  EXPECT_NEAR(*l1.round1.avg_amsr, 0.55, kEps);
  // A level of skipped problems only: listed, no figures.
  const GroupMetrics& l2 = b.levels.at(2);
  EXPECT_EQ(l2.problems, 1);
  EXPECT_EQ(l2.skipped, 1);
  EXPECT_FALSE(l2.final_round.corr.has_value());
  EXPECT_TRUE(l2.series.empty());
  // Overall: 3 attempted (the skipped one is not in the denominator).
  EXPECT_EQ(b.overall.problems, 4);
  EXPECT_EQ(b.overall.skipped, 1);
  EXPECT_EQ(b.overall.final_round.problems, 3);
  EXPECT_NEAR(*b.overall.final_round.corr, 2.0 / 3, kEps);
  EXPECT_NEAR(*b.overall.final_round.fast[2], 2.0 / 3, kEps);  // 3.0 and 1.6 > 1.5
  EXPECT_NEAR(*b.overall.final_round.avg_amsr, (3.0 + 1.6) / 3, kEps);
  EXPECT_NEAR(*b.overall.final_round.geomean_speedup, std::sqrt(3.0 * 1.6), kEps);
  EXPECT_NEAR(*b.overall.round1.geomean_speedup, std::sqrt(1.1 * 1.6), kEps);
  // Series: mean per round, level3/c's single value extended.
  ASSERT_EQ(b.overall.series.size(), 3u);
  EXPECT_NEAR(b.overall.series[0], 1.6 / 3, kEps);
  EXPECT_NEAR(b.overall.series[1], (1.1 + 1.6) / 3, kEps);
  EXPECT_NEAR(b.overall.series[2], (3.0 + 1.6) / 3, kEps);
}

TEST(MetricsTest, JsonUsesTheDocumentedNamesAndNullForMissingFigures) {
  BenchMetrics b = ComputeBenchMetrics({Outcome("x", 0, std::nullopt, std::nullopt, {0.0})});
  nlohmann::json j = GroupMetricsToJson(b.overall);
  for (const char* key :
       {"corr", "fast_1.0", "fast_1.2", "fast_1.5", "fast_2.0", "avg_amsr", "geomean_speedup",
        "corr_round1", "fast_2.0_round1", "avg_amsr_round1", "geomean_speedup_round1", "series"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["corr"], 0.0);
  EXPECT_TRUE(j["geomean_speedup"].is_null());
  EXPECT_EQ(j["attempted"], 1);
}

TEST(MetricsTest, TableHasARowPerLevelAndOverall) {
  BenchMetrics b = ComputeBenchMetrics(
      {Outcome("level1/a", 1, 1.5, 1.0, {1.5}), Outcome("u", 0, std::nullopt, std::nullopt)});
  std::string table = FormatMetricsTable(b);
  EXPECT_NE(table.find("level1"), std::string::npos);
  EXPECT_NE(table.find("unleveled"), std::string::npos);
  EXPECT_NE(table.find("overall"), std::string::npos);
  EXPECT_NE(table.find("50.0%"), std::string::npos);  // overall corr 1 of 2
}

TEST(MetricsTest, MeanPercentOfFloorPerLevelOverProblemsWithAFloor) {
  ProblemOutcome a = Outcome("level1/a", 1, 2.0, 2.0, {2.0});
  a.best_pct_of_floor = 40.0;
  a.ref_pct_of_floor = 20.0;
  ProblemOutcome b = Outcome("level1/b", 1, 3.0, 3.0, {3.0});
  b.best_pct_of_floor = 60.0;
  b.ref_pct_of_floor = 10.0;
  ProblemOutcome c = Outcome("level2/c", 2, 1.5, 1.5, {1.5});  // no floor measured
  BenchMetrics m = ComputeBenchMetrics({a, b, c});
  EXPECT_EQ(m.levels.at(1).floor_problems, 2);
  EXPECT_NEAR(*m.levels.at(1).mean_pct_of_floor, 50.0, kEps);
  EXPECT_NEAR(*m.levels.at(1).mean_ref_pct_of_floor, 15.0, kEps);
  EXPECT_FALSE(m.levels.at(2).mean_pct_of_floor.has_value());
  EXPECT_EQ(m.overall.floor_problems, 2);
  nlohmann::json j = GroupMetricsToJson(m.levels.at(2));
  EXPECT_TRUE(j["mean_pct_of_floor"].is_null());
  EXPECT_EQ(GroupMetricsToJson(m.overall)["mean_pct_of_floor"], 50.0);
  EXPECT_NE(FormatMetricsTable(m).find("level1      2 problems    50.0% / 15.0%"),
            std::string::npos)
      << FormatMetricsTable(m);
}

}  // namespace
}  // namespace ks
