// Suite discovery (docs/bench.md): a directory of KernelBench-format problems. `levelN/`
// sub-folders give levels (a KernelBench checkout's KernelBench/ directory, or the checkout
// itself, works as it is); problem files directly in the directory are level 0 (unleveled).
// A seed kernel sits beside its problem as `<stem>.<backend>.py`. A directory without levelN/
// folders may group its problems in other sub-folders (e.g. `kernelsmith curate`'s
// problems/<family>/): each is level 0 with the folder's name as `level_dir`.
// Thread-safety: functions only.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace ks {

struct SuiteProblem {
  int level = 0;          // 0: unleveled
  std::string level_dir;  // "level1", ...; "level0" for unleveled problems; or a group folder
  std::string stem;       // file name without .py, e.g. "19_ReLU"
  std::string path;       // the problem file
  std::string name;       // "<level_dir>/<stem>", unique in the suite
};

struct SuiteFilter {
  std::set<int> levels;  // empty: every level
  std::string glob;      // fnmatch pattern on the stem, the file name or the name; empty: all
};

// Problems of `dir` in (level, id, name) order, the id being the integer before the first
// '_' of a KernelBench stem. NotFound / InvalidArgument name the directory and what to fix.
Result<std::vector<SuiteProblem>> DiscoverSuite(const std::string& dir, const SuiteFilter& filter);

// Parses "1,2,3" (the --levels flag).
Result<std::set<int>> ParseLevels(const std::string& text);

// The seed kernel of `problem` for `backend` (`<stem>.<backend>.py` beside it); "" if none.
std::string SeedKernelPath(const SuiteProblem& problem, const std::string& backend);

}  // namespace ks
