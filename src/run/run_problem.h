// The problem a stored run was made for. A run keeps its problem's source and sha256 in run.db
// (runs.problem_source), so a run directory copied to another machine still has its
// reference; the file at the stored path is only a fallback for runs made before sources were
// stored, and otherwise only checked for changes.
// Thread-safety: functions.
#pragma once

#include <string>

#include "core/status.h"
#include "store/store.h"
#include "task/task.h"

namespace ks {

struct RunProblem {
  SourceFile problem;   // path: the run's problem_path; source and sha256 as stored
  bool stored = false;  // the source came from run.db (false: read from the file)
  // Non-empty when a file on disk differs from the stored source: what differs and that the
  // stored source is used. Callers print it as a warning.
  std::string warning;
};

// The problem of `run`. `disk_path` is the file to compare with (or, for a run without a
// stored source, to read); empty means the run's problem_path. A stored source is always used;
// when `disk_path` exists and its text differs, `warning` says so. A run without a stored
// source needs the file: NotFound when it is missing, InvalidArgument when its sha256 is not
// the run's (each message says what to pass instead).
Result<RunProblem> ProblemOfRun(const RunRecord& run, const std::string& disk_path = "");

}  // namespace ks
