// SqliteStore: the Store of one run directory's `run.db`.
//
// Connection settings: WAL journal, foreign keys on, a busy timeout, and synchronous=NORMAL by
// default. In WAL mode NORMAL never corrupts the database and loses nothing when the process
// dies (kill -9, crash): a committed transaction is in the WAL file (in the OS page cache)
// before the commit returns. Only an OS crash or power loss can roll back the last few commits
// — still to a consistent state, and a resumed run re-evaluates those programs. Set
// `synchronous_full` where that is not acceptable (fsync on every commit).
//
// Every write method is one transaction (BEGIN IMMEDIATE ... COMMIT).
// Thread-safety: one connection guarded by a mutex; every method holds it for its whole run,
// so calls from many threads are serialized. Several processes may open the same file; SQLite
// locks arbitrate and a writer waits up to `busy_timeout_ms` for another one.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "store/store.h"

namespace ks {

struct SqliteStoreOptions {
  // How long a write waits for another connection's write lock before failing with Timeout.
  // Default 5000 ms.
  int busy_timeout_ms = 5000;
  // synchronous=FULL instead of NORMAL: survive power loss too, at an fsync per commit.
  // Default false (see the header comment).
  bool synchronous_full = false;
  // Open an existing database read-only: nothing is created, configured or migrated, so a
  // running writer is never disturbed; write methods fail. A database at an older schema
  // version than this build's is refused (open it once read-write to migrate it). Default
  // false.
  bool read_only = false;
};

// Opens the database at `path`, creating the file if missing and migrating its schema to the
// latest version. The parent directory must exist (NotFound naming it otherwise; it is not
// created). A database written by a newer kernelsmith is refused with an error naming the
// file and both schema versions.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                               const SqliteStoreOptions& options = {});

}  // namespace ks
