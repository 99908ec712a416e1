// A small RAII layer over the SQLite C API: one connection (SqliteDb), prepared statements
// (SqliteStatement) and write transactions (SqliteTransaction). Every failure becomes a Status
// whose message names the database file, what was being done and SQLite's own reason.
//
// Thread-safety: none. A SqliteDb and everything prepared from it must be used by one thread
// at a time; callers (SqliteStore) serialize access with their own mutex. Different SqliteDb
// objects on the same file may be used concurrently, also from different processes (SQLite's
// file locks and the busy timeout arbitrate).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ks {

class SqliteStatement;

class SqliteDb {
 public:
  // Opens (creating if missing) the database file at `path`. The parent directory must
  // exist: a missing one is NotFound naming it, never created here. Extended result codes are
  // enabled; no PRAGMA is set (see SqliteStore for the connection settings).
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  // Opens an existing database file read-only (never created, never written): NotFound naming
  // the file when it does not exist. For readers (export, reports) next to a running writer.
  static Result<std::unique_ptr<SqliteDb>> OpenReadOnly(const std::string& path);
  // A private temporary database (SQLite's "" file: in memory, spilled to a temporary file
  // when large, deleted on close) holding a consistent copy of `source`; `source` is only
  // read. Errors and path() name `source`'s file. For reading an older database through a
  // migrated copy without changing the file.
  static Result<std::unique_ptr<SqliteDb>> TemporaryCopyOf(const SqliteDb& source);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // Runs one or more SQL statements that return no rows of interest.
  Status Exec(std::string_view sql, std::string_view what);
  // Prepares one statement. `what` says what it is for, used in error messages.
  Result<SqliteStatement> Prepare(std::string_view sql, std::string_view what);

  // A Status for SQLite result code `rc` while doing `what`, naming the file and carrying
  // SQLite's message. Constraint violations are InvalidArgument, a locked database Timeout,
  // everything else IOError.
  Status Error(int rc, std::string_view what) const;

 private:
  SqliteDb(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  sqlite3* db_ = nullptr;
};

// A prepared statement. Bind* record the first failure, which Step/Run then return, so a
// caller binds every parameter and checks once. Parameter indices start at 1 (SQLite's
// convention); column indices at 0.
class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  SqliteStatement& BindText(int index, std::string_view value);
  // Binds NULL for an empty string.
  SqliteStatement& BindTextOrNull(int index, std::string_view value);
  SqliteStatement& BindInt64(int index, int64_t value);
  SqliteStatement& BindDouble(int index, double value);
  SqliteStatement& BindNull(int index);
  SqliteStatement& BindOptionalInt64(int index, const std::optional<int64_t>& value);
  SqliteStatement& BindOptionalDouble(int index, const std::optional<double>& value);

  // Advances to the next row: true when a row is available, false when the statement is done.
  Result<bool> Step();
  // Steps until done (for INSERT/UPDATE/DDL); rows, if any, are ignored.
  Status Run();

  bool IsNull(int column) const;
  // Text of the column; "" for NULL. Embedded NUL bytes are kept.
  std::string ColumnText(int column) const;
  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::optional<int64_t> ColumnOptionalInt64(int column) const;
  std::optional<double> ColumnOptionalDouble(int column) const;

 private:
  friend class SqliteDb;
  SqliteStatement(const SqliteDb* db, sqlite3_stmt* stmt, std::string what)
      : db_(db), stmt_(stmt), what_(std::move(what)) {}
  void NoteBind(int rc, int index);

  const SqliteDb* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string what_;
  Status bind_status_;
};

// A write transaction begun with BEGIN IMMEDIATE (the write lock is taken up front, so two
// writers wait on the busy timeout instead of failing to upgrade). Rolled back on
// destruction unless Commit succeeded.
class SqliteTransaction {
 public:
  static Result<SqliteTransaction> Begin(SqliteDb* db, std::string_view what);
  SqliteTransaction(SqliteTransaction&& other) noexcept;
  SqliteTransaction& operator=(SqliteTransaction&&) = delete;
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  ~SqliteTransaction();

  // Commits. On failure the transaction is rolled back and the error returned.
  Status Commit();

 private:
  SqliteTransaction(SqliteDb* db, std::string what) : db_(db), what_(std::move(what)) {}
  SqliteDb* db_ = nullptr;
  std::string what_;
};

}  // namespace ks
