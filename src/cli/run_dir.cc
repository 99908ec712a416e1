#include "cli/run_dir.h"

#include "cli/evolve_setup.h"
#include "store/sqlite_store.h"

namespace ks {

Result<StoredRun> ReadRunDir(const std::string& run_dir) {
  Result<nlohmann::json> run_json = ReadJsonFile(run_dir + "/run.json");
  if (!run_json.ok()) {
    return Status::InvalidArgument(run_dir + " is not a run directory (" +
                                   run_json.status().message() + ")");
  }
  SqliteStoreOptions read_only;
  read_only.read_only = true;
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(run_dir + "/run.db", read_only);
  if (!store.ok()) return store.status();
  Result<RunRecord> run = (*store)->GetRun(run_json->value("run_id", std::string()));
  if (!run.ok()) return run.status();
  return StoredRun{std::move(*store), std::move(*run)};
}

}  // namespace ks
