// A run's trajectory as export sees it: every program of one evolve run with its evaluation,
// the LLM call that wrote it and its parent, plus the problem's reference source and
// difficulty. Read through the Store interface (docs/export.md).
// Thread-safety: values; LoadTrajectory uses the Store it is given from one thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "export/difficulty.h"
#include "store/store.h"

namespace ks {

struct TrajectoryStep {
  ProgramRecord program;
  std::optional<EvalResult> result;   // nullopt: not evaluated (yet)
  std::optional<LlmCallRecord> call;  // the call whose completion produced the program
  int parent = -1;                    // index of the parent step in Trajectory::steps; -1: none

  bool correct() const { return result && result->status == EvalStatus::kOk; }
  // The measured speedup of a correct program; nullopt otherwise.
  std::optional<double> speedup() const;
};

struct Trajectory {
  std::string run_dir;  // the directory holding run.db
  RunRecord run;
  std::string problem_id;      // "level2/19_Gemm" when the level is known, else the stem
  std::string reference_code;  // "" when the problem file was not found (see below)
  std::string
      reference_path;  // where reference_code was read ("run.db": stored); "" when not found
  Difficulty difficulty;
  // Non-empty when the file at the run's problem path differs from the stored source (which
  // export uses); export prints it as a warning.
  std::string warning;
  std::vector<TrajectoryStep> steps;  // the run's programs in insertion order

  // The reference's measured time (us) from the first evaluation that reports one; nullopt
  // when no evaluation timed it.
  std::optional<double> ReferenceUs() const;
};

// Loads the run `run` of `store`. The reference source is the one stored with the run
// (run.problem_source; `warning` says when the file at its path differs). A run made before sources
// were stored falls back to its problem file: the stored path as is, else relative to `run_dir` and
// each of its ancestors (a run started from another working directory); a file counts only when its
// SHA-256 is the run's problem_sha256. Not finding it is not an error (reference_code stays empty).
Result<Trajectory> LoadTrajectory(Store& store, const RunRecord& run, const std::string& run_dir);

// Where a run directory's problem file is: see LoadTrajectory. "" when not found.
std::string FindProblemFile(const std::string& problem_path, const std::string& sha256,
                            const std::string& run_dir);

}  // namespace ks
