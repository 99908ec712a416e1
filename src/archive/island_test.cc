#include "archive/island.h"

#include <gtest/gtest.h>

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

// Inserts with increasing seq, like the archive does.
class IslandTest : public ::testing::Test {
 protected:
  Island::InsertResult Add(Island& island, const std::string& id, double fitness, Cell cell) {
    return island.Insert(P(id, fitness), ++seq_, std::move(cell), false);
  }
  uint64_t seq_ = 0;
};

std::vector<std::string> Ids(const std::vector<const Program*>& programs) {
  std::vector<std::string> out;
  for (const Program* p : programs) out.push_back(p->id);
  return out;
}

TEST_F(IslandTest, CellHolderIsReplacedOnlyByAStrictlyBetterProgram) {
  Island island(/*elite_size=*/5, /*capacity=*/10);
  EXPECT_TRUE(Add(island, "a", 1.0, {0, 0}).cell_elite);
  EXPECT_FALSE(Add(island, "b", 1.0, {0, 0}).cell_elite);  // a tie keeps the incumbent
  EXPECT_EQ(island.grid().at({0, 0}), "a");
  EXPECT_TRUE(Add(island, "c", 2.0, {0, 0}).cell_elite);
  EXPECT_EQ(island.grid().at({0, 0}), "c");
  EXPECT_FALSE(Add(island, "d", 1.5, {0, 0}).cell_elite);
  EXPECT_EQ(island.grid().at({0, 0}), "c");
  EXPECT_TRUE(Add(island, "e", 0.1, {1, 0}).cell_elite);  // an empty cell takes anything
  EXPECT_EQ(island.grid().size(), 2u);
  EXPECT_EQ(island.size(), 5u);
}

TEST_F(IslandTest, RankIsFitnessThenInsertionOrder) {
  Island island(3, 10);
  Add(island, "a", 1.0, {0});
  Add(island, "b", 3.0, {0});
  Add(island, "c", 1.0, {0});
  Add(island, "d", 2.0, {0});
  EXPECT_EQ(Ids(island.Top(10)), (std::vector<std::string>{"b", "d", "a", "c"}));
  EXPECT_EQ(Ids(island.Elites()), (std::vector<std::string>{"b", "d", "a"}));
  EXPECT_TRUE(island.IsElite("a"));
  EXPECT_FALSE(island.IsElite("c"));
  EXPECT_EQ(island.Best()->id, "b");
  EXPECT_EQ(island.AtRank(3)->id, "c");
  EXPECT_EQ(island.AtRank(4), nullptr);
}

TEST_F(IslandTest, EvictionSparesElitesAndCellHolders) {
  Island island(/*elite_size=*/2, /*capacity=*/4);
  Add(island, "a", 5, {0});
  Add(island, "b", 4, {0});
  Add(island, "c", 3, {0});
  Add(island, "d", 0.5, {1});  // the worst, but alone in its cell
  // Full. "e" ranks above d, yet it is the worst program that holds no cell.
  Island::InsertResult e = Add(island, "e", 2, {0});
  EXPECT_EQ(e.evicted, (std::vector<std::string>{"e"}));
  EXPECT_EQ(island.Get("e"), nullptr);
  Island::InsertResult f = Add(island, "f", 3.5, {0});
  EXPECT_EQ(f.evicted, (std::vector<std::string>{"c"}));
  EXPECT_EQ(island.size(), 4u);
  EXPECT_EQ(Ids(island.Top(10)), (std::vector<std::string>{"a", "b", "f", "d"}));
  EXPECT_EQ(island.FindByCode("code of c\n"), nullptr);  // its code may come back later
}

TEST_F(IslandTest, EvictsAHolderWhenEveryNonEliteHoldsACell) {
  Island island(/*elite_size=*/1, /*capacity=*/2);
  Add(island, "a", 3, {0});
  Add(island, "b", 2, {1});
  EXPECT_EQ(Add(island, "c", 1, {2}).evicted, (std::vector<std::string>{"c"}));
  EXPECT_EQ(island.grid().count({2}), 0u);  // the cell is free again
  // d takes b's cell, so b no longer holds one and goes first.
  EXPECT_EQ(Add(island, "d", 2.5, {1}).evicted, (std::vector<std::string>{"b"}));
  EXPECT_EQ(island.grid().at({0}), "a");
  EXPECT_EQ(island.grid().at({1}), "d");
  // Many inserts never touch the elite.
  for (int i = 0; i < 20; ++i) Add(island, "x" + std::to_string(i), i % 3, {i % 4});
  EXPECT_NE(island.Get("a"), nullptr);
  EXPECT_EQ(island.size(), 2u);
}

TEST_F(IslandTest, RebinRecomputesCellsAndGivesEachToItsBest) {
  Island island(5, 10);
  Add(island, "a", 1, {0});
  Add(island, "b", 2, {1});
  Add(island, "c", 2, {2});
  // Collapse everything into cell {7}: b ranks first (fitter than a, added before c).
  island.Rebin([](const Program&) { return Cell{7}; });
  EXPECT_EQ(island.grid().size(), 1u);
  EXPECT_EQ(island.grid().at({7}), "b");
  EXPECT_EQ(*island.CellOf("a"), (Cell{7}));
}

TEST_F(IslandTest, FindsProgramsByCode) {
  Island island(2, 4);
  Add(island, "a", 1, {0});
  ASSERT_NE(island.FindByCode("code of a\n"), nullptr);
  EXPECT_EQ(island.FindByCode("code of a\n")->id, "a");
  EXPECT_EQ(island.FindByCode("code of a"), nullptr);
}

TEST_F(IslandTest, MembersComeInInsertionOrderWithMigrantFlag) {
  Island island(2, 4);
  Add(island, "low", 0, {0});
  island.Insert(P("high@i1", 9), ++seq_, {1}, /*migrant=*/true);
  std::vector<Island::Member> members = island.Members();
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].program->id, "low");
  EXPECT_FALSE(members[0].migrant);
  EXPECT_EQ(members[1].program->id, "high@i1");
  EXPECT_TRUE(members[1].migrant);
  EXPECT_TRUE(island.IsMigrant("high@i1"));
  EXPECT_LT(members[0].seq, members[1].seq);
}

}  // namespace
}  // namespace ks
