// The inputs of `kernelsmith export`: run directories of `kernelsmith evolve` (RUN_DIR/run.db)
// and bench directories of `kernelsmith bench` (problems/levelN/<stem>/run.db), opened
// read-only so that a run in progress is never disturbed.
// Thread-safety: functions.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "export/trajectory.h"

namespace ks {

// The run databases under `paths`, in argument order: PATH/run.db for a run directory, every
// run.db below PATH (sorted) for a bench or any directory of runs, PATH itself for a file.
// NotFound for a missing path; InvalidArgument for a directory that holds no run.db.
Result<std::vector<std::string>> FindRunDatabases(const std::vector<std::string>& paths);

// Every run of every database under `paths` (FindRunDatabases), loaded read-only. Errors name
// the database: not a run database, a schema newer than this kernelsmith, unreadable rows.
Result<std::vector<Trajectory>> LoadTrajectories(const std::vector<std::string>& paths);

}  // namespace ks
