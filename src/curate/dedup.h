// Deduplication of extracted modules (docs/curate.md, stage "dedup").
//
// Modules are visited in id order; the first of each group is its representative.
//   1. exact: modules with the same `ast_hash` (normalized AST: identifiers renamed, docstrings
//      and comments dropped) are one group;
//   2. near: the representatives of step 1 are compared by MinHash over token shingles; a module
//      whose LSH candidates include a kept representative with estimated Jaccard >= threshold
//      is merged into the most similar one (ties: the lower id).
// A module is merged into a kept representative, never into another duplicate, so groups do
// not chain.
// Thread-safety: functions only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "curate/minhash.h"

namespace ks {

struct DedupItem {
  int64_t id = 0;
  std::string ast_hash;
  std::vector<std::string> tokens;
};

struct DedupVerdict {
  int64_t merged_into = 0;  // the kept representative
  bool exact = false;       // same ast_hash as `duplicate_of`
  int64_t duplicate_of = 0; // the module it matched (== merged_into unless that was merged too)
  double jaccard = 1.0;     // MinHash estimate against `merged_into` (1 for exact)
};

struct DedupResult {
  std::map<int64_t, DedupVerdict> merged;  // only the merged modules
  int exact = 0;
  int near = 0;
};

// `items` in any order; visited by ascending id. InvalidArgument for a threshold outside
// (0, 1] or inconsistent MinHash options.
Result<DedupResult> Deduplicate(std::vector<DedupItem> items, double threshold,
                                const MinHashOptions& options = {});

// "exact duplicate of 12" / "near-duplicate of 12 (Jaccard 0.84)" /
// "exact duplicate of 15, itself a near-duplicate of 12 (Jaccard 0.84)".
std::string DescribeVerdict(const DedupVerdict& v);

}  // namespace ks
