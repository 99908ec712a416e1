#include "store/sqlite_store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include <string>
#include <utility>
#include <vector>

#include "core/sha256.h"
#include "store/schema.h"
#include "store/sqlite_store_impl.h"

namespace ks {

std::string DumpJsonColumn(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<nlohmann::json> ParseJsonColumn(const std::string& text, std::string_view what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(fmt::format("{}: malformed JSON: {}", what, e.what()));
  }
}

namespace {

// Runs a PRAGMA that returns one value and returns it as text.
Result<std::string> PragmaValue(SqliteDb* db, std::string_view sql) {
  Result<SqliteStatement> st = db->Prepare(sql, sql);
  if (!st.ok()) return st.status();
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  return *row ? st->ColumnText(0) : std::string();
}

Status Configure(SqliteDb* db, const SqliteStoreOptions& options) {
  Result<std::string> mode = PragmaValue(db, "PRAGMA journal_mode = WAL");
  if (!mode.ok()) return mode.status();
  if (*mode != "wal") {
    return Status::IOError(fmt::format(
        "{}: cannot switch to WAL journal mode (got '{}'); put the run directory on a local "
        "file system",
        db->path(), *mode));
  }
  Status s = db->Exec(
      options.synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
      "set synchronous mode");
  if (!s.ok()) return s;
  s = db->Exec("PRAGMA foreign_keys = ON", "enable foreign keys");
  if (!s.ok()) return s;
  Result<std::string> fk = PragmaValue(db, "PRAGMA foreign_keys");
  if (!fk.ok()) return fk.status();
  if (*fk != "1") {
    return Status::Internal(db->path() + ": this SQLite build does not enforce foreign keys");
  }
  return Status::Ok();
}

}  // namespace

namespace {

// The read-only variant of OpenSqliteStore: checks the schema version, changes nothing.
Result<std::unique_ptr<Store>> OpenReadOnlyStore(const std::string& path,
                                                 const SqliteStoreOptions& options) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::OpenReadOnly(path);
  if (!db.ok()) return db.status();
  int rc = sqlite3_busy_timeout((*db)->handle(), options.busy_timeout_ms);
  if (rc != SQLITE_OK) return (*db)->Error(rc, "set busy timeout");
  Result<int> version = ReadSchemaVersion(db->get());
  if (!version.ok()) return version.status();
  if (*version == 0) {
    return Status::InvalidArgument(
        path +
        " is not a kernelsmith run database (it has no tables); pass the run directory "
        "of `kernelsmith evolve` or `kernelsmith bench`");
  }
  if (*version > LatestSchemaVersion()) {
    return NewerSchemaError(**db, *version, LatestSchemaVersion());
  }
  if (*version < LatestSchemaVersion()) {
    // An older file is read through a migrated private copy: the file itself is never changed.
    Result<std::unique_ptr<SqliteDb>> copy = SqliteDb::TemporaryCopyOf(**db);
    if (!copy.ok()) return copy.status();
    Status s = (*copy)->Exec("PRAGMA foreign_keys = ON", "enable foreign keys");
    if (!s.ok()) return s;
    s = MigrateSchema(copy->get(), StoreMigrations());
    if (!s.ok()) return s;
    *db = std::move(*copy);
  }
  Status s = (*db)->Exec("PRAGMA query_only = 1", "set query_only");
  if (!s.ok()) return s;
  return std::unique_ptr<Store>(new SqliteStore(std::move(*db)));
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                               const SqliteStoreOptions& options) {
  if (options.read_only) return OpenReadOnlyStore(path, options);
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  int rc = sqlite3_busy_timeout((*db)->handle(), options.busy_timeout_ms);
  if (rc != SQLITE_OK) return (*db)->Error(rc, "set busy timeout");
  // Refuse a foreign or newer database before changing anything in it (the journal mode).
  Result<int> version = ReadSchemaVersion(db->get());
  if (!version.ok()) return version.status();
  if (*version > LatestSchemaVersion()) {
    return NewerSchemaError(**db, *version, LatestSchemaVersion());
  }
  Status s = Configure(db->get(), options);
  if (!s.ok()) return s;
  s = MigrateSchema(db->get(), StoreMigrations());
  if (!s.ok()) return s;
  return std::unique_ptr<Store>(new SqliteStore(std::move(*db)));
}

Status SqliteStore::CorruptRow(std::string_view what, const Status& cause) const {
  return Status::IOError(
      fmt::format("{}: {}: stored data is invalid: {}", db_->path(), what, cause.message()));
}

Result<bool> SqliteStore::ExistsLocked(std::string_view sql, std::string_view key,
                                       std::string_view what) {
  Result<SqliteStatement> st = db_->Prepare(sql, what);
  if (!st.ok()) return st.status();
  st->BindText(1, key);
  return st->Step();
}

Status SqliteStore::CheckRunExistsLocked(const std::string& run_id, std::string_view what) {
  Result<bool> found = ExistsLocked("SELECT 1 FROM runs WHERE id = ?", run_id, what);
  if (!found.ok()) return found.status();
  if (!*found) {
    return Status::NotFound(
        fmt::format("{}: {}: no run '{}' in this database", db_->path(), what, run_id));
  }
  return Status::Ok();
}

// --- runs ---

Status SqliteStore::CreateRun(const RunRecord& run) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("create run '{}'", run.id);
  if (run.id.empty()) return Status::InvalidArgument(db_->path() + ": create run: empty run id");
  Result<SqliteTransaction> txn = SqliteTransaction::Begin(db_.get(), what);
  if (!txn.ok()) return txn.status();
  Result<bool> exists = ExistsLocked("SELECT 1 FROM runs WHERE id = ?", run.id, what);
  if (!exists.ok()) return exists.status();
  if (*exists) {
    return Status::InvalidArgument(
        fmt::format("{}: {}: the run already exists", db_->path(), what));
  }
  Result<SqliteStatement> st = db_->Prepare(
      "INSERT INTO runs (id, config, problem_path, problem_sha256, problem_source, backend, "
      "status, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      what);
  if (!st.ok()) return st.status();
  st->BindText(1, run.id)
      .BindText(2, DumpJsonColumn(run.config))
      .BindText(3, run.problem_path)
      .BindText(4, run.problem_sha256)
      .BindTextOrNull(5, run.problem_source)
      .BindText(6, run.backend)
      .BindText(7, RunStatusName(run.status))
      .BindText(8, DumpJsonColumn(run.summary));
  Status s = st->Run();
  if (!s.ok()) return s;
  return txn->Commit();
}

Result<RunRecord> SqliteStore::GetRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("read run '{}'", run_id);
  Result<SqliteStatement> st = db_->Prepare(
      "SELECT id, created_at, config, problem_path, problem_sha256, backend, status, summary, "
      "problem_source FROM runs WHERE id = ?",
      what);
  if (!st.ok()) return st.status();
  st->BindText(1, run_id);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound(fmt::format("{}: no run '{}'", db_->path(), run_id));
  RunRecord run;
  run.id = st->ColumnText(0);
  run.created_at = st->ColumnText(1);
  Result<nlohmann::json> config = ParseJsonColumn(st->ColumnText(2), "runs.config");
  if (!config.ok()) return CorruptRow(what, config.status());
  run.config = std::move(*config);
  run.problem_path = st->ColumnText(3);
  run.problem_sha256 = st->ColumnText(4);
  run.backend = st->ColumnText(5);
  Result<RunStatus> status = ParseRunStatus(st->ColumnText(6));
  if (!status.ok()) return CorruptRow(what, status.status());
  run.status = *status;
  Result<nlohmann::json> summary = ParseJsonColumn(st->ColumnText(7), "runs.summary");
  if (!summary.ok()) return CorruptRow(what, summary.status());
  run.summary = std::move(*summary);
  if (!st->IsNull(8)) {
    run.problem_source = st->ColumnText(8);
    if (Sha256Hex(run.problem_source) != run.problem_sha256) {
      return CorruptRow(
          what, Status::InvalidArgument("runs.problem_source does not match runs.problem_sha256"));
    }
  }
  return run;
}

Result<std::vector<RunRecord>> SqliteStore::ListRuns() {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Result<SqliteStatement> st =
        db_->Prepare("SELECT id FROM runs ORDER BY created_at, rowid", "list runs");
    if (!st.ok()) return st.status();
    while (true) {
      Result<bool> row = st->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      ids.push_back(st->ColumnText(0));
    }
  }
  std::vector<RunRecord> runs;
  for (const std::string& id : ids) {
    Result<RunRecord> run = GetRun(id);
    if (!run.ok()) return run.status();
    runs.push_back(std::move(*run));
  }
  return runs;
}

namespace {

// Runs a one-row UPDATE of the run `run_id` in its own transaction; NotFound if no such run.
Status UpdateRun(SqliteDb* db, std::string_view sql, const std::string& value,
                 const std::string& run_id, const std::string& what) {
  Result<SqliteTransaction> txn = SqliteTransaction::Begin(db, what);
  if (!txn.ok()) return txn.status();
  Result<SqliteStatement> st = db->Prepare(sql, what);
  if (!st.ok()) return st.status();
  st->BindText(1, value).BindText(2, run_id);
  Status s = st->Run();
  if (!s.ok()) return s;
  if (sqlite3_changes(db->handle()) == 0) {
    return Status::NotFound(fmt::format("{}: {}: no run '{}'", db->path(), what, run_id));
  }
  return txn->Commit();
}

}  // namespace

Status SqliteStore::UpdateRunStatus(const std::string& run_id, RunStatus status) {
  std::lock_guard<std::mutex> lock(mu_);
  return UpdateRun(db_.get(), "UPDATE runs SET status = ? WHERE id = ?", RunStatusName(status),
                   run_id, fmt::format("update status of run '{}'", run_id));
}

Status SqliteStore::UpdateRunSummary(const std::string& run_id, const nlohmann::json& summary) {
  std::lock_guard<std::mutex> lock(mu_);
  return UpdateRun(db_.get(), "UPDATE runs SET summary = ? WHERE id = ?", DumpJsonColumn(summary),
                   run_id, fmt::format("update summary of run '{}'", run_id));
}

Status SqliteStore::SetProblemSource(const std::string& run_id, const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("store the problem source of run '{}'", run_id);
  Result<SqliteTransaction> txn = SqliteTransaction::Begin(db_.get(), what);
  if (!txn.ok()) return txn.status();
  Result<SqliteStatement> st = db_->Prepare(
      "SELECT problem_sha256, problem_source IS NOT NULL FROM runs WHERE id = ?", what);
  if (!st.ok()) return st.status();
  st->BindText(1, run_id);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound(fmt::format("{}: {}: no run '{}'", db_->path(), what, run_id));
  if (st->ColumnInt64(1) != 0) {
    return Status::InvalidArgument(
        fmt::format("{}: {}: the run has its problem source already", db_->path(), what));
  }
  if (Sha256Hex(source) != st->ColumnText(0)) {
    return Status::InvalidArgument(fmt::format(
        "{}: {}: this source is not the run's problem (its SHA-256 differs)", db_->path(), what));
  }
  Result<SqliteStatement> update =
      db_->Prepare("UPDATE runs SET problem_source = ? WHERE id = ?", what);
  if (!update.ok()) return update.status();
  update->BindText(1, source).BindText(2, run_id);
  Status s = update->Run();
  if (!s.ok()) return s;
  return txn->Commit();
}

// --- LLM calls ---

Result<int64_t> SqliteStore::RecordLlmCall(const LlmCallRecord& call) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("record LLM call of run '{}'", call.run_id);
  Result<SqliteTransaction> txn = SqliteTransaction::Begin(db_.get(), what);
  if (!txn.ok()) return txn.status();
  Status s = CheckRunExistsLocked(call.run_id, what);
  if (!s.ok()) return s;
  Result<SqliteStatement> st = db_->Prepare(
      "INSERT INTO llm_calls (run_id, model, endpoint, request, completion, prompt_tokens, "
      "completion_tokens, latency_s, error, attempt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      what);
  if (!st.ok()) return st.status();
  st->BindText(1, call.run_id)
      .BindText(2, call.model)
      .BindText(3, call.endpoint)
      .BindText(4, DumpJsonColumn(call.request))
      .BindText(5, call.completion)
      .BindOptionalInt64(6, call.prompt_tokens)
      .BindOptionalInt64(7, call.completion_tokens)
      .BindDouble(8, call.latency_s)
      .BindTextOrNull(9, call.error)
      .BindInt64(10, call.attempt);
  s = st->Run();
  if (!s.ok()) return s;
  int64_t id = sqlite3_last_insert_rowid(db_->handle());
  s = txn->Commit();
  if (!s.ok()) return s;
  return id;
}

Result<std::vector<LlmCallRecord>> SqliteStore::LlmCallsOfRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("read LLM calls of run '{}'", run_id);
  Result<SqliteStatement> st = db_->Prepare(
      "SELECT id, run_id, model, endpoint, request, completion, prompt_tokens, "
      "completion_tokens, latency_s, error, attempt, created_at FROM llm_calls "
      "WHERE run_id = ? ORDER BY id",
      what);
  if (!st.ok()) return st.status();
  st->BindText(1, run_id);
  std::vector<LlmCallRecord> calls;
  while (true) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    LlmCallRecord c;
    c.id = st->ColumnInt64(0);
    c.run_id = st->ColumnText(1);
    c.model = st->ColumnText(2);
    c.endpoint = st->ColumnText(3);
    Result<nlohmann::json> request = ParseJsonColumn(st->ColumnText(4), "llm_calls.request");
    if (!request.ok()) return CorruptRow(fmt::format("LLM call {}", c.id), request.status());
    c.request = std::move(*request);
    c.completion = st->ColumnText(5);
    c.prompt_tokens = st->ColumnOptionalInt64(6);
    c.completion_tokens = st->ColumnOptionalInt64(7);
    c.latency_s = st->ColumnDouble(8);
    c.error = st->ColumnText(9);
    c.attempt = static_cast<int>(st->ColumnInt64(10));
    c.created_at = st->ColumnText(11);
    calls.push_back(std::move(c));
  }
  return calls;
}

// --- engine state ---

Status SqliteStore::PutState(const std::string& run_id, const std::string& key,
                             const nlohmann::json& value) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string what = fmt::format("put state '{}' of run '{}'", key, run_id);
  Result<SqliteTransaction> txn = SqliteTransaction::Begin(db_.get(), what);
  if (!txn.ok()) return txn.status();
  Status s = CheckRunExistsLocked(run_id, what);
  if (!s.ok()) return s;
  Result<SqliteStatement> st = db_->Prepare(
      "INSERT INTO run_state (run_id, key, value) VALUES (?, ?, ?) "
      "ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value, "
      "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
      what);
  if (!st.ok()) return st.status();
  st->BindText(1, run_id).BindText(2, key).BindText(3, DumpJsonColumn(value));
  s = st->Run();
  if (!s.ok()) return s;
  return txn->Commit();
}

Result<nlohmann::json> SqliteStore::GetState(const std::string& run_id, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return StateLocked(run_id, key, fmt::format("read state '{}' of run '{}'", key, run_id));
}

Result<nlohmann::json> SqliteStore::StateLocked(const std::string& run_id, const std::string& key,
                                                const std::string& what) {
  Result<SqliteStatement> st =
      db_->Prepare("SELECT value FROM run_state WHERE run_id = ? AND key = ?", what);
  if (!st.ok()) return st.status();
  st->BindText(1, run_id).BindText(2, key);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound(fmt::format("{}: {}: never stored", db_->path(), what));
  Result<nlohmann::json> value = ParseJsonColumn(st->ColumnText(0), "run_state.value");
  if (!value.ok()) return CorruptRow(what, value.status());
  return std::move(*value);
}

// --- maintenance ---

Status SqliteStore::IntegrityCheck() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> problems;
  Result<SqliteStatement> st = db_->Prepare("PRAGMA integrity_check(20)", "integrity check");
  if (!st.ok()) return st.status();
  while (true) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    std::string line = st->ColumnText(0);
    if (line != "ok") problems.push_back(std::move(line));
  }
  Result<SqliteStatement> fk = db_->Prepare("PRAGMA foreign_key_check", "foreign key check");
  if (!fk.ok()) return fk.status();
  while (problems.size() < 20) {
    Result<bool> row = fk->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    problems.push_back(fmt::format("row {} of {} references a missing row of {}",
                                   fk->ColumnInt64(1), fk->ColumnText(0), fk->ColumnText(2)));
  }
  if (problems.empty()) return Status::Ok();
  return Status::IOError(
      fmt::format("{}: integrity check failed: {}", db_->path(), fmt::join(problems, "; ")));
}

}  // namespace ks
