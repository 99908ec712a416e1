#include "store/schema.h"

#include <fmt/format.h>

#include <string>

namespace ks {
namespace {

// Timestamps are ISO-8601 UTC with milliseconds, e.g. 2025-01-31T12:00:00.123Z.
#define KS_NOW "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"

// Version 1: runs, llm_calls, programs, evaluations, run_state. JSON columns hold the text
// of a JSON value. `programs.seq` is the insertion order (a rowid would not survive VACUUM).
constexpr std::string_view kV1 = R"sql(
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL DEFAULT )sql" KS_NOW R"sql(,
  config TEXT NOT NULL,
  problem_path TEXT NOT NULL,
  problem_sha256 TEXT NOT NULL,
  backend TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'waiting', 'failed')),
  summary TEXT NOT NULL
);
CREATE TABLE llm_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL REFERENCES runs(id),
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  request TEXT NOT NULL,
  completion TEXT NOT NULL,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  latency_s REAL NOT NULL,
  error TEXT,
  attempt INTEGER NOT NULL,
  created_at TEXT NOT NULL DEFAULT )sql" KS_NOW R"sql(
);
CREATE INDEX llm_calls_by_run ON llm_calls(run_id, id);
CREATE TABLE programs (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL UNIQUE,
  run_id TEXT NOT NULL REFERENCES runs(id),
  parent_id TEXT REFERENCES programs(id),
  code TEXT NOT NULL,
  code_hash TEXT NOT NULL,
  island INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  proposer TEXT NOT NULL CHECK (proposer IN ('seed', 'llm', 'tuner', 'command', 'files')),
  kind TEXT NOT NULL CHECK (kind IN ('seed', 'translation', 'evolution')),
  llm_call_id INTEGER REFERENCES llm_calls(id),
  created_at TEXT NOT NULL DEFAULT )sql" KS_NOW R"sql(,
  metrics TEXT NOT NULL
);
CREATE INDEX programs_by_run ON programs(run_id, seq);
CREATE INDEX programs_by_code_hash ON programs(run_id, code_hash);
CREATE INDEX programs_by_parent ON programs(parent_id);
CREATE TABLE evaluations (
  program_id TEXT PRIMARY KEY REFERENCES programs(id),
  status TEXT NOT NULL CHECK (status IN ('ok', 'compile_error', 'runtime_error', 'incorrect',
                                         'hacked', 'timeout', 'crash', 'infra_error')),
  speedup REAL,
  ref_us REAL,
  cand_us REAL,
  correct INTEGER NOT NULL CHECK (correct IN (0, 1)),
  result TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT )sql" KS_NOW R"sql(
);
CREATE INDEX evaluations_by_status ON evaluations(status);
CREATE TABLE run_state (
  run_id TEXT NOT NULL REFERENCES runs(id),
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL DEFAULT )sql" KS_NOW R"sql(,
  PRIMARY KEY (run_id, key)
);
)sql";

#undef KS_NOW

// Version 2: the problem's source is a column of its run (NULL for a run made before sources
// were stored), so a run directory copied elsewhere keeps its reference. Runs that kept it as
// the run_state key "problem_source" (a JSON string) have it moved into the column.
constexpr std::string_view kV2 = R"sql(
ALTER TABLE runs ADD COLUMN problem_source TEXT;
UPDATE runs SET problem_source = (
  SELECT json_extract(s.value, '$') FROM run_state s
  WHERE s.run_id = runs.id AND s.key = 'problem_source' AND json_type(s.value) = 'text');
DELETE FROM run_state WHERE key = 'problem_source';
)sql";

constexpr Migration kMigrations[] = {
    {1, "runs, programs, evaluations, llm_calls, run_state", kV1},
    {2, "runs.problem_source", kV2},
};

Result<bool> HasTable(SqliteDb* db, std::string_view name) {
  Result<SqliteStatement> st = db->Prepare(
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", "look up tables");
  if (!st.ok()) return st.status();
  st->BindText(1, name);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  return *row && st->ColumnInt64(0) > 0;
}

Result<int64_t> CountTables(SqliteDb* db) {
  Result<SqliteStatement> st =
      db->Prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'", "count tables");
  if (!st.ok()) return st.status();
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  return *row ? st->ColumnInt64(0) : int64_t{0};
}

Status CheckMigrationList(std::span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return Status::Internal(
          fmt::format("migration #{} has version {}, expected {} (versions must be 1, 2, 3, ...)",
                      i, migrations[i].version, i + 1));
    }
  }
  return Status::Ok();
}

}  // namespace

std::span<const Migration> StoreMigrations() { return kMigrations; }

int LatestSchemaVersion() { return static_cast<int>(std::size(kMigrations)); }

Result<int> ReadSchemaVersion(SqliteDb* db) {
  Result<bool> has = HasTable(db, "schema_version");
  if (!has.ok()) return has.status();
  if (!*has) {
    Result<int64_t> tables = CountTables(db);
    if (!tables.ok()) return tables.status();
    if (*tables == 0) return 0;
    return Status::InvalidArgument(fmt::format(
        "{} is not a kernelsmith run database (it has tables but no schema_version table); "
        "use another path",
        db->path()));
  }
  Result<SqliteStatement> st =
      db->Prepare("SELECT max(version) FROM schema_version", "read schema version");
  if (!st.ok()) return st.status();
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row || st->IsNull(0)) {
    return Status::IOError(fmt::format("{}: schema_version table is empty", db->path()));
  }
  return static_cast<int>(st->ColumnInt64(0));
}

Status NewerSchemaError(const SqliteDb& db, int version, int latest) {
  return Status::InvalidArgument(fmt::format(
      "{}: database schema version {} is newer than the latest this kernelsmith knows ({}); "
      "open it with a newer kernelsmith",
      db.path(), version, latest));
}

Status MigrateSchema(SqliteDb* db, std::span<const Migration> migrations) {
  Status s = CheckMigrationList(migrations);
  if (!s.ok()) return s;
  const int latest = static_cast<int>(migrations.size());
  while (true) {
    // The version is read inside the write transaction, so two processes opening the same new
    // file cannot both apply a migration.
    Result<SqliteTransaction> txn = SqliteTransaction::Begin(db, "migrate schema");
    if (!txn.ok()) return txn.status();
    Result<int> version = ReadSchemaVersion(db);
    if (!version.ok()) return version.status();
    if (*version > latest) return NewerSchemaError(*db, *version, latest);
    if (*version == latest) return Status::Ok();  // nothing written; the rollback is a no-op
    const Migration& m = migrations[static_cast<size_t>(*version)];
    std::string what = fmt::format("migration {} ({})", m.version, m.description);
    if (*version == 0) {
      s = db->Exec(
          "CREATE TABLE schema_version (version INTEGER NOT NULL);"
          "INSERT INTO schema_version (version) VALUES (0);",
          what);
      if (!s.ok()) return s;
    }
    s = db->Exec(m.sql, what);
    if (!s.ok()) return s;
    Result<SqliteStatement> st = db->Prepare("UPDATE schema_version SET version = ?", what);
    if (!st.ok()) return st.status();
    st->BindInt64(1, m.version);
    s = st->Run();
    if (!s.ok()) return s;
    s = txn->Commit();
    if (!s.ok()) return s;
  }
}

}  // namespace ks
