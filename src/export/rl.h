// RL dataset from evolution trajectories, in verl's layout (docs/export.md): one row per
// selected LLM step, whose prompt is the exact chat the proposer sent, and whose ground truth
// carries what a reward needs to evaluate a new completion against the step's parent
// (reference code, parent code, parent runtime and speedup, backend, problem id).
//
// Selections:
// - best (default): steps whose child became the run's new best: correct, not hacked and
//   faster than every correct program stored before it in the same run (the seed included).
// - all: every LLM step whose parent is measured (a translation's parent is the reference).
// - initial: the steps that start a trajectory: translations and revisions of the seed.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "export/sft.h"
#include "export/trajectory.h"

namespace ks {

enum class RlSelection { kBest, kAll, kInitial };
const char* RlSelectionName(RlSelection s);  // "best", "all", "initial"
Result<RlSelection> ParseRlSelection(const std::string& name);

struct RlOptions {
  RlSelection selection = RlSelection::kBest;
  // verl's `data_source` of every row (its reward manager routes on it). Default
  // "kernelsmith".
  std::string data_source = "kernelsmith";
};

// The version tag of the ground-truth JSON (`format` key).
inline constexpr const char* kGroundTruthFormat = "kernelsmith.rl/1";

ExportRows BuildRlRows(const std::vector<Trajectory>& trajectories, const RlOptions& options);

}  // namespace ks
