// A run directory opened to read (verify, bench's final re-measure): its run.db, read-only,
// and the run its run.json names.
// Thread-safety: functions only.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "store/store.h"

namespace ks {

struct StoredRun {
  std::unique_ptr<Store> store;
  RunRecord run;
};

// InvalidArgument "<dir> is not a run directory (...)" when run.json cannot be read; the
// store's error when run.db cannot be opened or holds no such run.
Result<StoredRun> ReadRunDir(const std::string& run_dir);

}  // namespace ks
