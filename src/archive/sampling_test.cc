#include "archive/sampling.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace ks {
namespace {

Program P(const std::string& id, double fitness) {
  Program p;
  p.id = id;
  p.code = "code of " + id + "\n";
  p.fitness = fitness;
  return p;
}

// n programs p0..p{n-1}; p_i has fitness i and sits in cell {cell_of(i)}.
template <typename CellOf>
Island MakeIsland(int n, int elite_size, CellOf cell_of) {
  Island island(elite_size, 1000);
  for (int i = 0; i < n; ++i) {
    island.Insert(P("p" + std::to_string(i), i), static_cast<uint64_t>(i + 1), Cell{cell_of(i)},
                  false);
  }
  return island;
}

TEST(SamplingTest, UniformIndexStaysInRangeAndCoversIt) {
  std::mt19937_64 rng(1);
  std::map<size_t, int> counts;
  for (int i = 0; i < 7000; ++i) {
    size_t k = UniformIndex(rng, 7);
    ASSERT_LT(k, 7u);
    ++counts[k];
  }
  for (size_t k = 0; k < 7; ++k) EXPECT_NEAR(counts[k], 1000, 150) << k;
  for (int i = 0; i < 1000; ++i) {
    double u = UniformReal(rng);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(SamplingTest, ForkedSeedsDifferPerStreamAndRepeat) {
  EXPECT_EQ(ForkSeed(42, 0), ForkSeed(42, 0));
  EXPECT_NE(ForkSeed(42, 0), ForkSeed(42, 1));
  EXPECT_NE(ForkSeed(42, 1), ForkSeed(43, 1));
  uint64_t s = 0;
  EXPECT_EQ(SplitMix64(s), 0xE220A8397B1DCDAFULL);  // reference SplitMix64 output for seed 0
}

TEST(SamplingTest, ModeSharesFollowTheRatios) {
  Island island = MakeIsland(30, 5, [](int i) { return i % 6; });
  for (SamplingRatios ratios : {SamplingRatios{0.7, 0.2, 0.1}, SamplingRatios{2, 5, 3}}) {
    std::mt19937_64 rng(7);
    std::map<SampleMode, int> counts;
    const int draws = 20000;
    for (int i = 0; i < draws; ++i) {
      ParentChoice c = SampleParentFrom(island, ratios, rng);
      ASSERT_NE(c.program, nullptr);
      ++counts[c.mode];
    }
    double total = ratios.exploitation + ratios.exploration + ratios.random;
    EXPECT_NEAR(counts[SampleMode::kExploitation] / double(draws), ratios.exploitation / total,
                0.015);
    EXPECT_NEAR(counts[SampleMode::kExploration] / double(draws), ratios.exploration / total,
                0.015);
    EXPECT_NEAR(counts[SampleMode::kRandom] / double(draws), ratios.random / total, 0.015);
  }
}

TEST(SamplingTest, ExploitationDrawsElitesWeightedByRank) {
  Island island = MakeIsland(20, 5, [](int i) { return i; });
  std::mt19937_64 rng(3);
  std::map<std::string, int> counts;
  const int draws = 15000;
  for (int i = 0; i < draws; ++i) {
    ParentChoice c = SampleParentFrom(island, {1, 0, 0}, rng);
    EXPECT_EQ(c.mode, SampleMode::kExploitation);
    ASSERT_TRUE(island.IsElite(c.program->id)) << c.program->id;
    ++counts[c.program->id];
  }
  // Ranks 0..4 are p19..p15 with weights 5..1 out of 15.
  EXPECT_NEAR(counts["p19"] / double(draws), 5.0 / 15, 0.02);
  EXPECT_NEAR(counts["p17"] / double(draws), 3.0 / 15, 0.02);
  EXPECT_NEAR(counts["p15"] / double(draws), 1.0 / 15, 0.02);
}

TEST(SamplingTest, ExplorationIsUniformOverCellsNotPrograms) {
  // Ten programs crowd cell 0; cells 1, 2, 3 hold one each.
  Island island = MakeIsland(13, 2, [](int i) { return i < 10 ? 0 : i - 9; });
  ASSERT_EQ(island.grid().size(), 4u);
  std::mt19937_64 rng(5);
  std::map<std::string, int> counts;
  const int draws = 8000;
  for (int i = 0; i < draws; ++i) {
    ParentChoice c = SampleParentFrom(island, {0, 1, 0}, rng);
    EXPECT_EQ(c.mode, SampleMode::kExploration);
    EXPECT_EQ(island.grid().at(*island.CellOf(c.program->id)), c.program->id);
    ++counts[c.program->id];
  }
  EXPECT_EQ(counts.size(), 4u);
  for (const auto& [id, n] : counts) EXPECT_NEAR(n / double(draws), 0.25, 0.025) << id;
}

TEST(SamplingTest, RandomDrawsAnyProgramUniformly) {
  Island island = MakeIsland(10, 2, [](int) { return 0; });
  std::mt19937_64 rng(9);
  std::map<std::string, int> counts;
  for (int i = 0; i < 10000; ++i) ++counts[SampleParentFrom(island, {0, 0, 1}, rng).program->id];
  EXPECT_EQ(counts.size(), 10u);  // non-elites and non-holders included
  for (const auto& [id, n] : counts) EXPECT_NEAR(n, 1000, 150) << id;
}

TEST(SamplingTest, EmptyIslandGivesNoParent) {
  Island island(2, 4);
  std::mt19937_64 rng(1);
  EXPECT_EQ(SampleParentFrom(island, {}, rng).program, nullptr);
  EXPECT_TRUE(SampleInspirationsFrom(island, nullptr, 3, rng).empty());
}

TEST(SamplingTest, InspirationsExcludeParentAndRepeatNothing) {
  Island island = MakeIsland(12, 4, [](int i) { return i % 5; });
  std::mt19937_64 rng(11);
  for (int parent_index : {0, 5, 11}) {
    const Program* parent = island.Get("p" + std::to_string(parent_index));
    for (size_t n = 0; n <= 14; ++n) {
      std::vector<const Program*> got = SampleInspirationsFrom(island, parent, n, rng);
      EXPECT_EQ(got.size(), std::min<size_t>(n, 11)) << n;
      std::set<std::string> ids;
      for (const Program* p : got) {
        EXPECT_NE(p->id, parent->id);
        EXPECT_TRUE(ids.insert(p->id).second) << "duplicate " << p->id;
      }
      // The first ceil(n/2) are the best programs other than the parent.
      int expect = 11;
      for (size_t k = 0; k < (n + 1) / 2 && k < got.size(); ++k, --expect) {
        if (expect == parent_index) --expect;
        EXPECT_EQ(got[k]->id, "p" + std::to_string(expect)) << "n=" << n << " k=" << k;
      }
    }
  }
}

TEST(SamplingTest, InspirationsAddProgramsFromOtherCells) {
  // The six best crowd cell 0; p0..p3 each hold a cell of their own (1..4).
  Island island = MakeIsland(10, 3, [](int i) { return i < 4 ? i + 1 : 0; });
  const Program* parent = island.Get("p1");  // holds cell 2
  std::mt19937_64 rng(13);
  std::set<std::string> diverse_seen;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<const Program*> got = SampleInspirationsFrom(island, parent, 4, rng);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0]->id, "p9");
    EXPECT_EQ(got[1]->id, "p8");
    // The other two come from distinct cells other than cell 0 and the parent's cell 2.
    std::set<Cell> cells;
    for (size_t k = 2; k < 4; ++k) {
      Cell c = *island.CellOf(got[k]->id);
      EXPECT_NE(c, Cell{0});
      EXPECT_NE(c, Cell{2});
      EXPECT_TRUE(cells.insert(c).second);
      diverse_seen.insert(got[k]->id);
    }
  }
  EXPECT_EQ(diverse_seen, (std::set<std::string>{"p0", "p2", "p3"}));  // random order
}

TEST(SamplingTest, InspirationsSkipCodeEqualToAParentFromElsewhere) {
  Island island = MakeIsland(4, 2, [](int i) { return i; });
  Program visitor = P("elsewhere", 100);
  visitor.code = island.Get("p3")->code;  // same code, other id
  std::mt19937_64 rng(17);
  std::vector<const Program*> got = SampleInspirationsFrom(island, &visitor, 4, rng);
  ASSERT_EQ(got.size(), 3u);
  for (const Program* p : got) EXPECT_NE(p->id, "p3");
}

}  // namespace
}  // namespace ks
