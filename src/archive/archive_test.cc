#include "archive/archive.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/sha256.h"

namespace ks {
namespace {

Program P(const std::string& id, double fitness, int island = 0) {
  Program p;
  p.id = id;
  p.code = "def kernel():  # " + id + "\n    return " + std::to_string(fitness) + "\n";
  p.fitness = fitness;
  p.island = island;
  return p;
}

std::unique_ptr<Archive> Make(ArchiveOptions options) {
  Result<std::unique_ptr<Archive>> a = Archive::Create(std::move(options));
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? std::move(a).value() : nullptr;
}

AddOutcome MustAdd(Archive& archive, Program p) {
  Result<AddOutcome> r = archive.Add(std::move(p));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : AddOutcome{};
}

std::vector<std::string> Ids(const std::vector<const Program*>& programs) {
  std::vector<std::string> out;
  for (const Program* p : programs) out.push_back(p->id);
  return out;
}

// A fixed workload over three islands with varied fitness and complexity.
void Populate(Archive& archive, int count, const std::string& prefix = "c") {
  for (int i = 0; i < count; ++i) {
    Program p = P(prefix + std::to_string(i), (i * 37 % 23) / 7.0, i % archive.num_islands());
    p.metrics["complexity"] = (i * 13) % 50;
    MustAdd(archive, std::move(p));
  }
}

// One transcript line per call, so two archives can be compared call for call.
std::vector<std::string> Drive(Archive& archive, int rounds, const std::string& prefix) {
  std::vector<std::string> log;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < archive.num_islands(); ++i) {
      ParentChoice parent = archive.SampleParent(i);
      if (parent.program == nullptr) continue;
      std::string line = std::string(SampleModeName(parent.mode)) + ":" + parent.program->id;
      for (const Program* p : archive.SampleInspirations(i, parent.program, 3)) line += "," + p->id;
      Program child = P(prefix + std::to_string(r) + "_" + std::to_string(i),
                        parent.program->fitness + ((r + i) % 3) * 0.1 - 0.1, i);
      child.parent_id = parent.program->id;
      AddOutcome out = MustAdd(archive, std::move(child));
      line += out.stored ? " +" : " -";
      for (const std::string& m : archive.EndGeneration(i)) line += " migrant " + m;
      log.push_back(line);
    }
  }
  return log;
}

TEST(ArchiveTest, CreateRejectsBadOptionsNamingTheField) {
  auto bad = [](auto mutate, const std::string& field) {
    ArchiveOptions o;
    mutate(o);
    Result<std::unique_ptr<Archive>> a = Archive::Create(o);
    ASSERT_FALSE(a.ok()) << field;
    EXPECT_EQ(a.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(a.status().message().find(field), std::string::npos) << a.status().message();
  };
  bad([](ArchiveOptions& o) { o.num_islands = 0; }, "num_islands");
  bad([](ArchiveOptions& o) { o.elite_size = 0; }, "elite_size");
  bad([](ArchiveOptions& o) { o.population_per_island = 19; }, "population_per_island");
  bad([](ArchiveOptions& o) { o.migration_interval = -1; }, "migration_interval");
  bad([](ArchiveOptions& o) { o.random_ratio = -0.1; }, "random_ratio");
  bad([](ArchiveOptions& o) { o.exploitation_ratio = o.exploration_ratio = o.random_ratio = 0; },
      "must be > 0");
  bad([](ArchiveOptions& o) { o.features[1].bins = 0; }, "'score'");
  EXPECT_TRUE(Archive::Create(ArchiveOptions{}).ok());
}

TEST(ArchiveTest, AddRejectsBadProgramsAndPlacesSeedsRoundRobin) {
  auto archive = Make({});
  EXPECT_FALSE(archive->Add(P("", 1)).ok());
  EXPECT_FALSE(archive->Add(P("x", 1, 4)).ok());
  EXPECT_FALSE(archive->Add(P("x", std::nan(""))).ok());
  MustAdd(*archive, P("x", 1));
  Result<AddOutcome> again = archive->Add(P("x", 2, 1));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("'x'"), std::string::npos);

  std::vector<int> islands;
  for (int i = 0; i < 6; ++i) {
    islands.push_back(MustAdd(*archive, P("seed" + std::to_string(i), 0, kAnyIsland)).island);
  }
  EXPECT_EQ(islands, (std::vector<int>{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(archive->Get("seed5")->island, 1);
}

TEST(ArchiveTest, SameCodeIsStoredOncePerIsland) {
  auto archive = Make({});
  MustAdd(*archive, P("a", 1, 0));
  Program twin = P("b", 2, 0);
  twin.code = archive->Get("a")->code;
  AddOutcome dup = MustAdd(*archive, twin);
  EXPECT_FALSE(dup.stored);
  EXPECT_EQ(dup.duplicate_of, "a");
  EXPECT_EQ(archive->Get("b"), nullptr);
  twin.island = 1;  // another island may hold the same code
  EXPECT_TRUE(MustAdd(*archive, twin).stored);
  EXPECT_EQ(archive->size(), 2u);
}

TEST(ArchiveTest, OutcomeReportsCellIslandAndGlobalBests) {
  auto archive = Make({});
  AddOutcome a = MustAdd(*archive, P("a", 1.0, 0));
  EXPECT_TRUE(a.stored && a.cell_elite && a.island_best && a.global_best);
  AddOutcome b = MustAdd(*archive, P("b", 1.0, 1));
  EXPECT_TRUE(b.island_best);   // island 1 was empty
  EXPECT_FALSE(b.global_best);  // a tie does not displace the incumbent
  AddOutcome c = MustAdd(*archive, P("c", 0.5, 0));
  EXPECT_FALSE(c.island_best || c.global_best);
  AddOutcome d = MustAdd(*archive, P("d", 2.0, 1));
  EXPECT_TRUE(d.island_best && d.global_best);
  EXPECT_EQ(archive->Best()->id, "d");
  EXPECT_EQ(Ids(archive->Top(0, 5)), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(archive->Get("c")->fitness, 0.5);
  EXPECT_EQ(archive->Get("nope"), nullptr);
  EXPECT_TRUE(archive->Top(9, 5).empty());
}

TEST(ArchiveTest, PopulationBoundEvictsTheWorstAndKeepsElites) {
  ArchiveOptions o;
  o.num_islands = 1;
  o.elite_size = 2;
  o.population_per_island = 3;
  o.features = {{"score", 1, std::nullopt, std::nullopt}};  // one cell: no holders to spare
  auto archive = Make(o);
  for (int i = 0; i < 10; ++i) {
    double fitness = (i * 7) % 10;  // 0 7 4 1 8 5 2 9 6 3
    AddOutcome out = MustAdd(*archive, P("p" + std::to_string(i), fitness));
    EXPECT_LE(archive->island(0).size(), 3u);
    for (const std::string& gone : out.evicted) EXPECT_EQ(archive->Get(gone), nullptr);
  }
  // With one cell, what survives is simply the three fittest ever added: 9, 8 and 7.
  EXPECT_EQ(Ids(archive->Top(0, 10)), (std::vector<std::string>{"p7", "p4", "p1"}));
  EXPECT_TRUE(archive->island(0).IsElite("p7"));
  EXPECT_TRUE(archive->island(0).IsElite("p4"));
  EXPECT_EQ(archive->size(), 3u);
}

TEST(ArchiveTest, WideningAnAdaptiveRangeRebinsEveryIsland) {
  ArchiveOptions o;
  o.num_islands = 2;
  o.features = {{"score", 2, std::nullopt, std::nullopt}};
  auto archive = Make(o);
  MustAdd(*archive, P("a", 0, 0));
  MustAdd(*archive, P("b", 1, 0));
  MustAdd(*archive, P("x", 1, 1));
  EXPECT_EQ(*archive->island(0).CellOf("a"), Cell{0});
  EXPECT_EQ(*archive->island(0).CellOf("b"), Cell{1});
  MustAdd(*archive, P("c", 3, 1));  // range now [0, 3]: 1 falls in bin 0
  EXPECT_EQ(*archive->island(0).CellOf("b"), Cell{0});
  EXPECT_EQ(archive->island(0).grid().size(), 1u);
  EXPECT_EQ(archive->island(0).grid().at({0}), "b");
  EXPECT_EQ(*archive->island(1).CellOf("x"), Cell{0});
  EXPECT_EQ(*archive->island(1).CellOf("c"), Cell{1});
}

std::set<std::string> CodeHashes(const Archive& archive, int island, size_t* count) {
  std::set<std::string> hashes;
  std::vector<const Program*> all = archive.Top(island, 1000);
  for (const Program* p : all) hashes.insert(Sha256Hex(p->code));
  *count = all.size();
  return hashes;
}

TEST(ArchiveTest, MigrationFollowsTheRingAtTheIntervalWithoutDuplicateCode) {
  ArchiveOptions o;
  o.num_islands = 3;
  o.migration_interval = 2;
  o.migration_count = 2;
  auto archive = Make(o);
  MustAdd(*archive, P("p5", 5, 0));
  MustAdd(*archive, P("p4", 4, 0));
  MustAdd(*archive, P("p3", 3, 0));
  Program q = P("q", 4, 1);
  q.code = archive->Get("p4")->code;  // island 1 already holds p4's code
  MustAdd(*archive, q);

  EXPECT_TRUE(archive->EndGeneration(0).empty());  // generation 1: not yet
  // Generation 2: the top two are p5 and p4; p4's code is there already and p3 does not
  // stand in for it.
  EXPECT_EQ(archive->EndGeneration(0), (std::vector<std::string>{"p5@i1"}));
  const Program* copy = archive->Get("p5@i1");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->island, 1);
  EXPECT_EQ(copy->code, archive->Get("p5")->code);
  EXPECT_EQ(copy->fitness, 5);
  EXPECT_TRUE(archive->island(1).IsMigrant("p5@i1"));
  EXPECT_EQ(archive->Best()->id, "p5");  // the copy ties; the original stays best
  EXPECT_EQ(archive->generation(0), 2);

  archive->EndGeneration(0);
  EXPECT_TRUE(archive->EndGeneration(0).empty());  // generation 4: all already there

  // Island 1 forwards only what was created on it (q), not the migrant p5@i1.
  EXPECT_TRUE(archive->EndGeneration(1).empty());
  EXPECT_EQ(archive->EndGeneration(1), (std::vector<std::string>{"q@i2"}));

  // The ring closes: island 2 sends to island 0.
  MustAdd(*archive, P("r", 7, 2));
  archive->EndGeneration(2);
  EXPECT_EQ(archive->EndGeneration(2), (std::vector<std::string>{"r@i0"}));
  EXPECT_EQ(archive->Top(0, 1)[0]->id, "r@i0");

  for (int i = 0; i < 3; ++i) {
    size_t count = 0;
    EXPECT_EQ(CodeHashes(*archive, i, &count).size(), count) << "island " << i;
  }
}

TEST(ArchiveTest, ZeroIntervalNeverMigrates) {
  ArchiveOptions o;
  o.num_islands = 2;
  o.migration_interval = 0;
  auto archive = Make(o);
  MustAdd(*archive, P("a", 1, 0));
  for (int g = 0; g < 50; ++g) EXPECT_TRUE(archive->EndGeneration(0).empty());
  EXPECT_EQ(archive->island(1).size(), 0u);
  EXPECT_EQ(archive->generation(0), 50);
}

TEST(ArchiveTest, SameSeedSameSamplesDifferentSeedDifferentSamples) {
  ArchiveOptions o;
  o.num_islands = 3;
  o.migration_interval = 3;
  o.seed = 7;
  auto a = Make(o);
  auto b = Make(o);
  o.seed = 8;
  auto c = Make(o);
  for (Archive* x : {a.get(), b.get(), c.get()}) Populate(*x, 30);
  std::vector<std::string> la = Drive(*a, 20, "n");
  EXPECT_EQ(la, Drive(*b, 20, "n"));
  EXPECT_NE(la, Drive(*c, 20, "n"));
  EXPECT_GT(la.size(), 50u);
}

TEST(ArchiveTest, EachIslandDrawsFromItsOwnStream) {
  ArchiveOptions o;
  o.num_islands = 2;
  auto a = Make(o);
  auto b = Make(o);
  Populate(*a, 20);
  Populate(*b, 20);
  std::vector<std::string> only0, interleaved0;
  for (int i = 0; i < 100; ++i) {
    only0.push_back(a->SampleParent(0).program->id);
    b->SampleParent(1);
    b->SampleInspirations(1, nullptr, 2);
    interleaved0.push_back(b->SampleParent(0).program->id);
  }
  EXPECT_EQ(only0, interleaved0);
}

TEST(ArchiveTest, SnapshotRestoreReproducesEverythingAfterwards) {
  ArchiveOptions o;
  o.num_islands = 3;
  o.migration_interval = 2;
  o.elite_size = 4;
  o.population_per_island = 12;  // small, so eviction happens on both sides
  o.seed = 99;
  auto original = Make(o);
  Populate(*original, 30);
  Drive(*original, 7, "before");

  nlohmann::json snapshot = original->Snapshot();
  Result<std::unique_ptr<Archive>> restored =
      Archive::Restore(nlohmann::json::parse(snapshot.dump()));
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  Archive& copy = **restored;
  EXPECT_EQ(copy.Snapshot(), snapshot);
  EXPECT_EQ(copy.size(), original->size());
  EXPECT_EQ(copy.Best()->id, original->Best()->id);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(copy.island(i).grid(), original->island(i).grid());
    EXPECT_EQ(copy.generation(i), original->generation(i));
  }

  std::vector<std::string> expected = Drive(*original, 15, "after");
  EXPECT_EQ(Drive(copy, 15, "after"), expected);
  EXPECT_EQ(copy.Snapshot(), original->Snapshot());
}

TEST(ArchiveTest, RestoreRejectsDamagedSnapshots) {
  auto archive = Make({});
  Populate(*archive, 8);
  nlohmann::json good = archive->Snapshot();
  ASSERT_TRUE(Archive::Restore(good).ok());

  nlohmann::json version = good;
  version["version"] = 99;
  EXPECT_FALSE(Archive::Restore(version).ok());
  nlohmann::json rng = good;
  rng["islands"][0]["rng"] = "not a state";
  Result<std::unique_ptr<Archive>> r = Archive::Restore(rng);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("rng"), std::string::npos) << r.status().message();
  nlohmann::json islands = good;
  islands["islands"].erase(0);
  EXPECT_FALSE(Archive::Restore(islands).ok());
  nlohmann::json twice = good;
  twice["islands"][1]["programs"].push_back(twice["islands"][0]["programs"][0]);
  EXPECT_FALSE(Archive::Restore(twice).ok());
  nlohmann::json options = good;
  options["options"]["elite_size"] = 0;
  EXPECT_FALSE(Archive::Restore(options).ok());
  EXPECT_FALSE(Archive::Restore(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace ks
