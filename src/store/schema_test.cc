#include "store/schema.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "store/sqlite_db.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

using store_testing::MakeRun;
using store_testing::ScratchDir;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::unique_ptr<SqliteDb> OpenDb(const std::string& path) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(*db) : nullptr;
}

int64_t CountRows(SqliteDb* db, const std::string& table) {
  Result<SqliteStatement> st = db->Prepare("SELECT count(*) FROM " + table, "count");
  EXPECT_TRUE(st.ok()) << st.status().ToString();
  if (!st.ok()) return -1;
  Result<bool> row = st->Step();
  return row.ok() && *row ? st->ColumnInt64(0) : -1;
}

TEST(StoreSchemaTest, MigratesAnEmptyDatabaseToTheLatestVersion) {
  ScratchDir dir;
  std::unique_ptr<SqliteDb> db = OpenDb(dir.File("run.db"));
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 0);
  ASSERT_TRUE(MigrateSchema(db.get(), StoreMigrations()).ok());
  EXPECT_EQ(*ReadSchemaVersion(db.get()), LatestSchemaVersion());
  for (const char* table : {"runs", "programs", "evaluations", "llm_calls", "run_state"}) {
    EXPECT_EQ(CountRows(db.get(), table), 0) << table;
  }
  // Migrating again is a no-op.
  ASSERT_TRUE(MigrateSchema(db.get(), StoreMigrations()).ok());
  EXPECT_EQ(CountRows(db.get(), "schema_version"), 1);
}

TEST(StoreSchemaTest, AppliesOnlyTheNewMigrationsInOrder) {
  ScratchDir dir;
  std::unique_ptr<SqliteDb> db = OpenDb(dir.File("m.db"));
  ASSERT_NE(db, nullptr);
  const Migration v1[] = {{1, "t", "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);"}};
  ASSERT_TRUE(MigrateSchema(db.get(), v1).ok());
  const Migration v3[] = {v1[0],
                          {2, "u", "INSERT INTO t VALUES (2);"},
                          {3, "w", "INSERT INTO t SELECT max(x) * 10 FROM t;"}};
  ASSERT_TRUE(MigrateSchema(db.get(), v3).ok());
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 3);
  // Migration 1 ran once; 2 ran before 3.
  EXPECT_EQ(CountRows(db.get(), "t"), 3);
  EXPECT_EQ(CountRows(db.get(), "t WHERE x = 20"), 1);
}

TEST(StoreSchemaTest, AFailedMigrationLeavesThePreviousVersion) {
  ScratchDir dir;
  std::unique_ptr<SqliteDb> db = OpenDb(dir.File("m.db"));
  ASSERT_NE(db, nullptr);
  const Migration list[] = {
      {1, "t", "CREATE TABLE t (x INTEGER);"},
      {2, "broken", "INSERT INTO t VALUES (1); INSERT INTO nowhere VALUES (1);"}};
  Status s = MigrateSchema(db.get(), list);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "migration 2 (broken)")) << s.message();
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 1);
  EXPECT_EQ(CountRows(db.get(), "t"), 0);  // the half of migration 2 that ran was rolled back
}

TEST(StoreSchemaTest, ANewerDatabaseIsRefusedNamingFileAndVersions) {
  ScratchDir dir;
  std::string path = dir.File("run.db");
  {
    Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->CreateRun(MakeRun("r1")).ok());
  }
  {
    std::unique_ptr<SqliteDb> db = OpenDb(path);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec("UPDATE schema_version SET version = 99", "bump").ok());
  }
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
  ASSERT_FALSE(store.ok());
  const std::string& msg = store.status().message();
  EXPECT_TRUE(Contains(msg, path)) << msg;
  EXPECT_TRUE(Contains(msg, "99")) << msg;
  EXPECT_TRUE(Contains(msg, "(" + std::to_string(LatestSchemaVersion()) + ")")) << msg;
  // Nothing was changed.
  std::unique_ptr<SqliteDb> db = OpenDb(path);
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 99);
  EXPECT_EQ(CountRows(db.get(), "runs"), 1);
}

TEST(StoreSchemaTest, AForeignSqliteDatabaseIsRefused) {
  ScratchDir dir;
  std::string path = dir.File("other.db");
  {
    std::unique_ptr<SqliteDb> db = OpenDb(path);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec("CREATE TABLE customers (name TEXT)", "create").ok());
  }
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(Contains(store.status().message(), "not a kernelsmith run database"))
      << store.status().message();
}

TEST(StoreSchemaTest, BadMigrationListIsAnInternalError) {
  ScratchDir dir;
  std::unique_ptr<SqliteDb> db = OpenDb(dir.File("m.db"));
  ASSERT_NE(db, nullptr);
  const Migration gap[] = {{1, "a", "SELECT 1;"}, {3, "c", "SELECT 1;"}};
  EXPECT_EQ(MigrateSchema(db.get(), gap).code(), Status::Code::kInternal);
}

}  // namespace
}  // namespace ks
