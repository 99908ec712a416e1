#include "export/run_inputs.h"

#include <gtest/gtest.h>

#include "export/test_trajectories.h"

namespace ks {
namespace {

using export_testing::ScratchDir;
using export_testing::TrajectoryWriter;
using export_testing::WriteCraftedRun;

TEST(RunInputsTest, FindsRunAndBenchDirectories) {
  ScratchDir dir;
  WriteCraftedRun(dir.File("evolve"), "single");
  // A bench: problems/levelN/<stem>/run.db, the problem files in a directory without a
  // level in its path (the level comes from the bench's layout).
  {
    TrajectoryWriter a(dir.File("bench/problems/level2/4_B"), "b", "../../../suite/4_B.py");
    TrajectoryWriter b(dir.File("bench/problems/level1/3_A"), "a", "../../../suite/3_A.py");
  }
  Result<std::vector<std::string>> dbs =
      FindRunDatabases({dir.File("evolve"), dir.File("bench")});
  ASSERT_TRUE(dbs.ok()) << dbs.status().message();
  EXPECT_EQ(*dbs, (std::vector<std::string>{dir.File("evolve/run.db"),
                                            dir.File("bench/problems/level1/3_A/run.db"),
                                            dir.File("bench/problems/level2/4_B/run.db")}));
  Result<std::vector<Trajectory>> t = LoadTrajectories({dir.File("bench")});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0].run.id, "a");
  EXPECT_EQ((*t)[0].difficulty.category, "level1");
  EXPECT_EQ((*t)[0].problem_id, "level1/3_A");
  EXPECT_EQ((*t)[0].difficulty.source, "path");
  EXPECT_EQ((*t)[0].reference_path, dir.File("suite/3_A.py"));
  EXPECT_EQ((*t)[1].difficulty.category, "level2");
}

TEST(RunInputsTest, ClearErrors) {
  ScratchDir dir;
  Result<std::vector<Trajectory>> t = LoadTrajectories({dir.File("missing")});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Status::Code::kNotFound);
  EXPECT_NE(t.status().message().find("no such run directory"), std::string::npos);

  std::filesystem::create_directories(dir.File("empty"));
  t = LoadTrajectories({dir.File("empty")});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("holds no run.db"), std::string::npos);

  std::filesystem::create_directories(dir.File("text"));
  ASSERT_TRUE(WriteFileAtomic(dir.File("text/run.db"), "not a database at all, just text").ok());
  t = LoadTrajectories({dir.File("text")});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("text/run.db"), std::string::npos) << t.status().message();
}

TEST(RunInputsTest, FindsTheProblemFileFromAnAncestorOfTheRunDirectory) {
  ScratchDir dir;
  const std::string text = "class Model: pass\n";
  std::filesystem::create_directories(dir.File("work/suite"));
  ASSERT_TRUE(WriteFileAtomic(dir.File("work/suite/p.py"), text).ok());
  std::string sha = Sha256Hex(text);
  // evolve ran in work/ with a relative problem path; the run directory is work/runs/x.
  EXPECT_EQ(FindProblemFile("suite/p.py", sha, dir.File("work/runs/x")),
            dir.File("work/suite/p.py"));
  EXPECT_EQ(FindProblemFile("suite/p.py", Sha256Hex("changed"), dir.File("work/runs/x")), "");
  EXPECT_EQ(FindProblemFile(dir.File("work/suite/p.py"), sha, "/"), dir.File("work/suite/p.py"));
}

}  // namespace
}  // namespace ks
