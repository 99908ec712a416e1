#include "store/sqlite_db.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <utility>

namespace ks {

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("database path is empty");
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    return Status::NotFound(
        fmt::format("cannot open database {}: directory {} does not exist (create it first)", path,
                    parent.string()));
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string reason = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status::IOError(fmt::format("cannot open database {}: {}", path, reason));
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<SqliteDb>(new SqliteDb(path, db));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::OpenReadOnly(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("database path is empty");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::NotFound(fmt::format("cannot open database {}: no such file", path));
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string reason = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status::IOError(fmt::format("cannot open database {} read-only: {}", path, reason));
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<SqliteDb>(new SqliteDb(path, db));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::TemporaryCopyOf(const SqliteDb& source) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      "", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string reason = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status::IOError(
        fmt::format("cannot open a temporary database to copy {}: {}", source.path(), reason));
  }
  sqlite3_extended_result_codes(db, 1);
  std::unique_ptr<SqliteDb> copy(new SqliteDb(source.path(), db));
  sqlite3_backup* backup = sqlite3_backup_init(db, "main", source.handle(), "main");
  if (backup == nullptr) return copy->Error(sqlite3_errcode(db), "copy into a temporary database");
  rc = sqlite3_backup_step(backup, -1);
  int finish = sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) return source.Error(rc, "copy into a temporary database");
  if (finish != SQLITE_OK) return copy->Error(finish, "copy into a temporary database");
  return copy;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Status SqliteDb::Error(int rc, std::string_view what) const {
  std::string reason =
      db_ != nullptr && sqlite3_errcode(db_) == rc ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  std::string msg = fmt::format("{}: {}: {}", path_, what, reason);
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
      return Status::InvalidArgument(std::move(msg));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Timeout(msg +
                             " (another process holds the database; is another "
                             "kernelsmith using this run directory?)");
    default:
      return Status::IOError(std::move(msg));
  }
}

Status SqliteDb::Exec(std::string_view sql, std::string_view what) {
  std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);  // the same text is available through sqlite3_errmsg
  if (rc != SQLITE_OK) return Error(rc, what);
  return Status::Ok();
}

Result<SqliteStatement> SqliteDb::Prepare(std::string_view sql, std::string_view what) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(rc, what);
  }
  return SqliteStatement(this, stmt, std::string(what));
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      what_(std::move(other.what_)),
      bind_status_(std::move(other.bind_status_)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    what_ = std::move(other.what_);
    bind_status_ = std::move(other.bind_status_);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

void SqliteStatement::NoteBind(int rc, int index) {
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = db_->Error(rc, fmt::format("{} (binding parameter {})", what_, index));
  }
}

SqliteStatement& SqliteStatement::BindText(int index, std::string_view value) {
  NoteBind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
  return *this;
}

SqliteStatement& SqliteStatement::BindTextOrNull(int index, std::string_view value) {
  return value.empty() ? BindNull(index) : BindText(index, value);
}

SqliteStatement& SqliteStatement::BindInt64(int index, int64_t value) {
  NoteBind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

SqliteStatement& SqliteStatement::BindDouble(int index, double value) {
  NoteBind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

SqliteStatement& SqliteStatement::BindNull(int index) {
  NoteBind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

SqliteStatement& SqliteStatement::BindOptionalInt64(int index,
                                                    const std::optional<int64_t>& value) {
  return value.has_value() ? BindInt64(index, *value) : BindNull(index);
}

SqliteStatement& SqliteStatement::BindOptionalDouble(int index,
                                                     const std::optional<double>& value) {
  return value.has_value() ? BindDouble(index, *value) : BindNull(index);
}

Result<bool> SqliteStatement::Step() {
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, what_);
}

Status SqliteStatement::Run() {
  while (true) {
    Result<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::string SqliteStatement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return "";
  int bytes = sqlite3_column_bytes(stmt_, column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes));
}

int64_t SqliteStatement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double SqliteStatement::ColumnDouble(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::optional<int64_t> SqliteStatement::ColumnOptionalInt64(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ColumnInt64(column);
}

std::optional<double> SqliteStatement::ColumnOptionalDouble(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ColumnDouble(column);
}

Result<SqliteTransaction> SqliteTransaction::Begin(SqliteDb* db, std::string_view what) {
  Status s = db->Exec("BEGIN IMMEDIATE", fmt::format("{} (begin transaction)", what));
  if (!s.ok()) return s;
  return SqliteTransaction(db, std::string(what));
}

SqliteTransaction::SqliteTransaction(SqliteTransaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), what_(std::move(other.what_)) {}

SqliteTransaction::~SqliteTransaction() {
  // Best effort: a failed rollback leaves SQLite to roll back when the connection closes.
  if (db_ != nullptr && sqlite3_get_autocommit(db_->handle()) == 0) {
    (void)db_->Exec("ROLLBACK", what_);
  }
}

Status SqliteTransaction::Commit() {
  if (db_ == nullptr) return Status::Internal(what_ + ": transaction already finished");
  Status s = db_->Exec("COMMIT", fmt::format("{} (commit)", what_));
  if (!s.ok()) {
    if (sqlite3_get_autocommit(db_->handle()) == 0) (void)db_->Exec("ROLLBACK", what_);
    db_ = nullptr;
    return s;
  }
  db_ = nullptr;
  return Status::Ok();
}

}  // namespace ks
