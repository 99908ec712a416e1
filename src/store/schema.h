// The run database's schema: ordered migrations and the code that applies them.
//
// Version N of the schema is the result of applying migrations 1..N in order, each in its own
// transaction together with the update of `schema_version` (a one-row table), so a crash
// leaves the database at some version i, never between two. A database at a version newer
// than this build knows is refused, never touched.
// Thread-safety: functions over a SqliteDb the caller owns exclusively while they run.
#pragma once

#include <span>
#include <string_view>

#include "core/status.h"
#include "store/sqlite_db.h"

namespace ks {

struct Migration {
  int version;                   // the schema version after this migration: 1, 2, 3, ...
  std::string_view description;  // one line, for logs and error messages
  std::string_view sql;          // one or more statements; run inside the migration's transaction
};

// The migrations this build knows, in order; the last one's version is the latest.
std::span<const Migration> StoreMigrations();
int LatestSchemaVersion();

// The database's schema version: 0 for an empty database (no tables at all). A database that
// has tables but no `schema_version` table is InvalidArgument ("not a kernelsmith run
// database"), naming the file.
Result<int> ReadSchemaVersion(SqliteDb* db);

// The error for a database at `version`, newer than `latest`: InvalidArgument naming the file
// and both versions.
Status NewerSchemaError(const SqliteDb& db, int version, int latest);

// Applies every migration of `migrations` (contiguous versions starting at 1) newer than the
// database's version, each in one transaction. If the database is newer than the last
// migration, returns InvalidArgument naming the file, its version and the latest known one,
// and changes nothing. If a migration fails, the database stays at the version before it and
// the error names the migration. Tests pass their own lists; SqliteStore passes
// StoreMigrations().
Status MigrateSchema(SqliteDb* db, std::span<const Migration> migrations);

}  // namespace ks
