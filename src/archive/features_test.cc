#include "archive/features.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ks {
namespace {

Program WithFitness(double fitness, std::map<std::string, double> metrics = {}) {
  Program p;
  p.id = "p";
  p.code = "a = 1\n";
  p.fitness = fitness;
  p.metrics = std::move(metrics);
  return p;
}

TEST(ArchiveFeaturesTest, ComplexityCountsCodeLinesOnly) {
  EXPECT_EQ(CodeComplexity(""), 0);
  EXPECT_EQ(CodeComplexity("import torch\n\n# comment\n   // c-style\n  y = 1  # trailing\n\t\n"),
            2);
  EXPECT_EQ(CodeComplexity("a\nb\nc"), 3);  // no final newline
  EXPECT_EQ(CodeComplexity("# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n"), 1);
}

TEST(ArchiveFeaturesTest, ValueComesFromMetricsThenBuiltIns) {
  Program p = WithFitness(1.5);
  p.code = "a = 1\nb = 2\n# c\n";
  EXPECT_EQ(FeatureValue(p, "complexity"), 2);
  EXPECT_EQ(FeatureValue(p, "score"), 1.5);
  EXPECT_EQ(FeatureValue(p, "registers"), 0);
  p.metrics = {{"complexity", 40}, {"registers", 96}};
  EXPECT_EQ(FeatureValue(p, "complexity"), 40);
  EXPECT_EQ(FeatureValue(p, "registers"), 96);
}

TEST(ArchiveFeaturesTest, BinIndexEdgesAndClamping) {
  EXPECT_EQ(BinIndex(0.0, 0, 1, 4), 0);
  EXPECT_EQ(BinIndex(0.2499, 0, 1, 4), 0);
  EXPECT_EQ(BinIndex(0.25, 0, 1, 4), 1);
  EXPECT_EQ(BinIndex(0.5, 0, 1, 4), 2);
  EXPECT_EQ(BinIndex(0.75, 0, 1, 4), 3);
  EXPECT_EQ(BinIndex(1.0, 0, 1, 4), 3);  // the top edge belongs to the last bin
  EXPECT_EQ(BinIndex(-5, 0, 1, 4), 0);
  EXPECT_EQ(BinIndex(5, 0, 1, 4), 3);
  EXPECT_EQ(BinIndex(std::numeric_limits<double>::quiet_NaN(), 0, 1, 4), 0);
  EXPECT_EQ(BinIndex(std::numeric_limits<double>::infinity(), 0, 1, 4), 3);
  EXPECT_EQ(BinIndex(3, 2, 2, 4), 0);  // empty range
  EXPECT_EQ(BinIndex(0.9, 0, 1, 1), 0);
  EXPECT_EQ(BinIndex(150, 100, 200, 10), 5);
}

TEST(ArchiveFeaturesTest, FixedRangesMapToCells) {
  FeatureSpace space({{"complexity", 10, 0.0, 100.0}, {"score", 4, 0.0, 2.0}});
  EXPECT_EQ(space.CellOf(WithFitness(1.0, {{"complexity", 35}})), (Cell{3, 2}));
  EXPECT_EQ(space.CellOf(WithFitness(2.5, {{"complexity", 1000}})), (Cell{9, 3}));
  EXPECT_EQ(space.CellOf(WithFitness(-1, {{"complexity", 0}})), (Cell{0, 0}));
  // Fixed ranges never move.
  EXPECT_FALSE(space.Observe(WithFitness(50, {{"complexity", 1e6}})));
  EXPECT_EQ(space.range(1).hi, 2.0);
}

TEST(ArchiveFeaturesTest, AdaptiveRangeWidensWithValuesSeen) {
  FeatureSpace space({{"score", 4, std::nullopt, std::nullopt}});
  EXPECT_FALSE(space.range(0).seen);
  EXPECT_EQ(space.CellOf(WithFitness(3)), (Cell{0}));

  EXPECT_TRUE(space.Observe(WithFitness(0)));
  EXPECT_EQ(space.CellOf(WithFitness(0)), (Cell{0}));  // a single value: one bin
  EXPECT_TRUE(space.Observe(WithFitness(4)));
  EXPECT_FALSE(space.Observe(WithFitness(2)));  // inside the range: nothing changes
  EXPECT_EQ(space.range(0).lo, 0);
  EXPECT_EQ(space.range(0).hi, 4);
  EXPECT_EQ(space.CellOf(WithFitness(1)), (Cell{1}));
  EXPECT_EQ(space.CellOf(WithFitness(4)), (Cell{3}));

  EXPECT_TRUE(space.Observe(WithFitness(-4)));
  EXPECT_EQ(space.CellOf(WithFitness(1)), (Cell{2}));  // same value, new bin
  EXPECT_FALSE(space.Observe(WithFitness(0, {{"score", std::nan("")}})));
}

TEST(ArchiveFeaturesTest, ValidateNamesTheBadDimension) {
  EXPECT_TRUE(ValidateFeatures(DefaultFeatures()).ok());
  EXPECT_FALSE(ValidateFeatures({}).ok());
  Status bins = ValidateFeatures({{"score", 0, std::nullopt, std::nullopt}});
  EXPECT_EQ(bins.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(bins.message().find("'score'"), std::string::npos) << bins.message();
  EXPECT_NE(bins.message().find("bins"), std::string::npos) << bins.message();
  EXPECT_FALSE(
      ValidateFeatures({{"a", 2, std::nullopt, std::nullopt}, {"a", 2, std::nullopt, std::nullopt}})
          .ok());
  EXPECT_FALSE(ValidateFeatures({{"a", 2, 0.0, std::nullopt}}).ok());
  EXPECT_FALSE(ValidateFeatures({{"a", 2, 1.0, 1.0}}).ok());
  EXPECT_FALSE(ValidateFeatures({{"", 2, std::nullopt, std::nullopt}}).ok());
}

TEST(ArchiveFeaturesTest, RangesRoundTripThroughJson) {
  FeatureSpace a(DefaultFeatures());
  Program p = WithFitness(1.25);
  p.code = "x\ny\n";
  a.Observe(p);
  a.Observe(WithFitness(3.5, {{"complexity", 12}}));
  FeatureSpace b(DefaultFeatures());
  ASSERT_TRUE(b.RangesFromJson(nlohmann::json::parse(a.RangesToJson().dump())).ok());
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(b.range(i).lo, a.range(i).lo);
    EXPECT_EQ(b.range(i).hi, a.range(i).hi);
    EXPECT_TRUE(b.range(i).seen);
  }
  FeatureSpace c({{"score", 3, std::nullopt, std::nullopt}});
  EXPECT_FALSE(c.RangesFromJson(a.RangesToJson()).ok());
}

}  // namespace
}  // namespace ks
