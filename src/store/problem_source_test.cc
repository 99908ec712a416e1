// The problem's source kept with its run: schema version 2 moves it into runs.problem_source,
// older databases still open (read-write: migrated; read-only: through a migrated copy), and a
// source that does not match its stored sha256 is reported as corrupt.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/file.h"
#include "core/sha256.h"
#include "store/schema.h"
#include "store/sqlite_db.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace ks {
namespace {

using store_testing::MakeRun;
using store_testing::ScratchDir;

constexpr char kSource[] = "class Model:\n    pass\n";

// A database as kernelsmith wrote it at schema version 1: run "old" without a stored source,
// run "kept" with its source in run_state under "problem_source" (a JSON string).
void WriteVersion1Database(const std::string& path) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE(MigrateSchema(db->get(), StoreMigrations().first(1)).ok());
  const std::string sha = Sha256Hex(kSource);
  ASSERT_TRUE((*db)
                  ->Exec("INSERT INTO runs (id, config, problem_path, problem_sha256, backend, "
                         "status, summary) VALUES "
                         "('old', '{}', 'p.py', '" +
                             sha +
                             "', 'cpu', 'finished', '{}'), "
                             "('kept', '{}', 'p.py', '" +
                             sha +
                             "', 'cpu', 'finished', '{}');"
                             "INSERT INTO run_state (run_id, key, value) VALUES "
                             "('kept', 'problem_source', '\"class Model:\\n    pass\\n\"');",
                         "write a version-1 run")
                  .ok());
}

int SchemaVersionOf(const std::string& path) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::OpenReadOnly(path);
  if (!db.ok()) return -1;
  Result<int> v = ReadSchemaVersion(db->get());
  return v.ok() ? *v : -1;
}

TEST(ProblemSourceTest, AVersion1DatabaseMigratesAndKeepsTheSourceItHad) {
  ScratchDir dir;
  const std::string path = dir.File("run.db");
  WriteVersion1Database(path);
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(SchemaVersionOf(path), LatestSchemaVersion());
  Result<RunRecord> kept = (*store)->GetRun("kept");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->problem_source, kSource);
  Result<RunRecord> old = (*store)->GetRun("old");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->problem_source, "");
  // The source left run_state: it has one home.
  EXPECT_EQ((*store)->GetState("kept", "problem_source").status().code(), Status::Code::kNotFound);
}

TEST(ProblemSourceTest, AVersion1DatabaseOpensReadOnlyWithoutBeingChanged) {
  ScratchDir dir;
  const std::string path = dir.File("run.db");
  WriteVersion1Database(path);
  Result<std::string> before = ReadFile(path);
  ASSERT_TRUE(before.ok());
  SqliteStoreOptions options;
  options.read_only = true;
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(path, options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Result<std::vector<RunRecord>> runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[1].problem_source, kSource);
  EXPECT_FALSE((*store)->CreateRun(MakeRun("new")).ok());  // still read-only
  store->reset();
  EXPECT_EQ(SchemaVersionOf(path), 1);
  EXPECT_EQ(*ReadFile(path), *before);
}

TEST(ProblemSourceTest, ASourceThatDoesNotMatchItsHashIsReportedAsCorrupt) {
  ScratchDir dir;
  const std::string path = dir.File("run.db");
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok());
  RunRecord run = MakeRun("r");
  run.problem_source = kSource;
  run.problem_sha256 = Sha256Hex(kSource);
  ASSERT_TRUE((*store)->CreateRun(run).ok());
  {
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("UPDATE runs SET problem_source = 'x = 1'", "edit").ok());
  }
  Result<RunRecord> read = (*store)->GetRun("r");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("does not match"), std::string::npos)
      << read.status().message();
}

}  // namespace
}  // namespace ks
