// The read-only mode of SqliteStore (SqliteStoreOptions::read_only) and ListRuns.
#include <gtest/gtest.h>

#include "core/file.h"
#include "store/sqlite_db.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

using store_testing::MakeProgram;
using store_testing::MakeRun;
using store_testing::ScratchDir;

SqliteStoreOptions ReadOnly() {
  SqliteStoreOptions o;
  o.read_only = true;
  return o;
}

TEST(StoreReadOnlyTest, ReadsNextToAWriterAndNeverWrites) {
  ScratchDir dir;
  std::string path = dir.File("run.db");
  Result<std::unique_ptr<Store>> writer = OpenSqliteStore(path);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_TRUE((*writer)->CreateRun(MakeRun("first")).ok());
  ASSERT_TRUE((*writer)->CreateRun(MakeRun("second")).ok());
  ASSERT_TRUE((*writer)->AddProgram(MakeProgram("first", "p1", "x = 1\n")).ok());

  Result<std::unique_ptr<Store>> reader = OpenSqliteStore(path, ReadOnly());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  Result<std::vector<RunRecord>> runs = (*reader)->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].id, "first");
  EXPECT_EQ((*runs)[1].id, "second");
  EXPECT_FALSE((*reader)->CreateRun(MakeRun("third")).ok());

  // The writer goes on while the reader is open, and the reader sees its commits.
  ASSERT_TRUE((*writer)->AddProgram(MakeProgram("first", "p2", "x = 2\n", "p1")).ok());
  Result<std::vector<ProgramRecord>> programs = (*reader)->ProgramsOfRun("first");
  ASSERT_TRUE(programs.ok());
  EXPECT_EQ(programs->size(), 2u);
}

TEST(StoreReadOnlyTest, RefusesWhatIsNotARunDatabase) {
  ScratchDir dir;
  Result<std::unique_ptr<Store>> missing = OpenSqliteStore(dir.File("none.db"), ReadOnly());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir.File("none.db")));  // not created

  ASSERT_TRUE(WriteFileAtomic(dir.File("empty.db"), "").ok());
  Result<std::unique_ptr<Store>> empty = OpenSqliteStore(dir.File("empty.db"), ReadOnly());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("not a kernelsmith run database"), std::string::npos);

  std::string newer = dir.File("newer.db");
  ASSERT_TRUE(OpenSqliteStore(newer).ok());
  {
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(newer);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("UPDATE schema_version SET version = 99", "bump").ok());
  }
  Result<std::unique_ptr<Store>> refused = OpenSqliteStore(newer, ReadOnly());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("newer"), std::string::npos);
}

}  // namespace
}  // namespace ks
