#include "curate/curate_store.h"

#include <sqlite3.h>

namespace ks {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, root_index INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS extracted (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS inputs (id INTEGER PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS llm (
  id INTEGER PRIMARY KEY, reply TEXT NOT NULL, error TEXT NOT NULL, verified TEXT);
)sql";

nlohmann::json ParseOrNull(const std::string& text) {
  if (text.empty()) return nullptr;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

}  // namespace

Result<std::unique_ptr<CurateStore>> CurateStore::Open(const std::string& path) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  int rc = sqlite3_busy_timeout((*db)->handle(), 10000);
  if (rc != SQLITE_OK) return (*db)->Error(rc, "set busy timeout");
  Status s = (*db)->Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
                         "set WAL journal mode");
  if (s.ok()) s = (*db)->Exec(kSchema, "create the curate schema");
  if (!s.ok()) return s;
  return std::unique_ptr<CurateStore>(new CurateStore(std::move(*db)));
}

Result<std::optional<std::string>> CurateStore::GetMeta(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteStatement> st = db_->Prepare("SELECT value FROM meta WHERE key = ?", "read meta");
  if (!st.ok()) return st.status();
  st->BindText(1, key);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(st->ColumnText(0));
}

Status CurateStore::SetMeta(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteStatement> st =
      db_->Prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", "write meta");
  if (!st.ok()) return st.status();
  st->BindText(1, key).BindText(2, value);
  return st->Run();
}

Result<std::set<std::string>> CurateStore::DoneFiles() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteStatement> st = db_->Prepare("SELECT path FROM files", "list extracted files");
  if (!st.ok()) return st.status();
  std::set<std::string> out;
  for (;;) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.insert(st->ColumnText(0));
  }
  return out;
}

Status CurateStore::AddExtracted(const std::vector<std::pair<std::string, int>>& files,
                                 const std::vector<ExtractedRow>& rows) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteTransaction> tx = SqliteTransaction::Begin(db_.get(), "store extracted modules");
  if (!tx.ok()) return tx.status();
  for (const auto& [path, root_index] : files) {
    Result<SqliteStatement> st = db_->Prepare(
        "INSERT OR REPLACE INTO files (path, root_index) VALUES (?, ?)", "mark a file extracted");
    if (!st.ok()) return st.status();
    st->BindText(1, path).BindInt64(2, root_index);
    Status s = st->Run();
    if (!s.ok()) return s;
    Result<SqliteStatement> del =
        db_->Prepare("DELETE FROM extracted WHERE path = ?", "drop stale records of a file");
    if (!del.ok()) return del.status();
    del->BindText(1, path);
    s = del->Run();
    if (!s.ok()) return s;
  }
  for (const ExtractedRow& r : rows) {
    Result<SqliteStatement> st =
        db_->Prepare("INSERT INTO extracted (path, record) VALUES (?, ?)", "store a module");
    if (!st.ok()) return st.status();
    st->BindText(1, r.path).BindText(2, r.record.dump());
    Status s = st->Run();
    if (!s.ok()) return s;
  }
  return tx->Commit();
}

Result<std::vector<ExtractedRow>> CurateStore::AllExtracted() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteStatement> st = db_->Prepare(
      "SELECT e.path, f.root_index, e.record FROM extracted e JOIN files f ON f.path = e.path "
      "ORDER BY e.seq",
      "read extracted modules");
  if (!st.ok()) return st.status();
  std::vector<ExtractedRow> out;
  for (;;) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    ExtractedRow r;
    r.path = st->ColumnText(0);
    r.root_index = static_cast<int>(st->ColumnInt64(1));
    r.record = ParseOrNull(st->ColumnText(2));
    if (r.record.is_object()) out.push_back(std::move(r));
  }
  return out;
}

Result<std::map<int64_t, nlohmann::json>> CurateStore::AllInputs() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteStatement> st = db_->Prepare("SELECT id, record FROM inputs", "read inputs");
  if (!st.ok()) return st.status();
  std::map<int64_t, nlohmann::json> out;
  for (;;) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out[st->ColumnInt64(0)] = ParseOrNull(st->ColumnText(1));
  }
  return out;
}

Status CurateStore::PutInputs(const std::vector<std::pair<int64_t, nlohmann::json>>& results) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteTransaction> tx = SqliteTransaction::Begin(db_.get(), "store inputs results");
  if (!tx.ok()) return tx.status();
  for (const auto& [id, record] : results) {
    Result<SqliteStatement> st = db_->Prepare(
        "INSERT OR REPLACE INTO inputs (id, record) VALUES (?, ?)", "store an inputs result");
    if (!st.ok()) return st.status();
    st->BindInt64(1, id).BindText(2, record.dump());
    Status s = st->Run();
    if (!s.ok()) return s;
  }
  return tx->Commit();
}

Result<std::map<int64_t, LlmRow>> CurateStore::AllLlm() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteStatement> st =
      db_->Prepare("SELECT id, reply, error, verified FROM llm", "read LLM repairs");
  if (!st.ok()) return st.status();
  std::map<int64_t, LlmRow> out;
  for (;;) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    LlmRow r;
    r.reply = st->ColumnText(1);
    r.error = st->ColumnText(2);
    r.verified = ParseOrNull(st->ColumnText(3));
    out[st->ColumnInt64(0)] = std::move(r);
  }
  return out;
}

Status CurateStore::PutLlm(int64_t id, const LlmRow& row) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<SqliteStatement> st = db_->Prepare(
      "INSERT OR REPLACE INTO llm (id, reply, error, verified) VALUES (?, ?, ?, ?)",
      "store an LLM repair");
  if (!st.ok()) return st.status();
  st->BindInt64(1, id).BindText(2, row.reply).BindText(3, row.error);
  if (row.verified.is_null()) {
    st->BindNull(4);
  } else {
    st->BindText(4, row.verified.dump());
  }
  return st->Run();
}

}  // namespace ks
