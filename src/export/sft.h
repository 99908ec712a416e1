// SFT dataset from evolution trajectories, with the paper's dual filtering (docs/export.md):
// a translation step (PyTorch → kernel) is kept when its output is correct and not hacked; an
// evolution step (kernel → kernel) only when the child is correct, not hacked and its gain
// over the parent, child_speedup / parent_speedup, is above `min_gain`. Then duplicates
// (same prompt and completion) and examples over the token cap are dropped and the rows are
// balanced across difficulty categories. Each row is one turn: the exact messages the
// proposer sent and the completion it got, as
// {"messages": [...prompt, assistant], "prompt": [...], "completion": [assistant], "meta"}.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "export/summary.h"
#include "export/trajectory.h"

namespace ks {

struct SftOptions {
  // An evolution step is kept when child_speedup / parent_speedup > min_gain. Default 1.0:
  // strictly faster than the parent.
  double min_gain = 1.0;
  // Rows with more tokens (prompt + completion) are dropped. Default 65536 (the paper's 32K
  // prompt and 32K completion caps).
  int64_t max_tokens = 65536;
  // Balance: no difficulty category keeps more than balance_ratio times the rows of the
  // smallest non-empty one. 0 turns balancing off. Default 2.0.
  double balance_ratio = 2.0;
};

struct ExportRows {
  std::vector<nlohmann::json> rows;
  ExportSummary summary;
};

ExportRows BuildSftRows(const std::vector<Trajectory>& trajectories, const SftOptions& options);

// The rows kept by balancing: indices into `categories` (one category per row, with the row's
// problem and its value, larger first), at most ceil(ratio × smallest category) per category,
// taken round-robin over problems within a category. Returned sorted. `ratio` <= 0 keeps all.
struct BalanceItem {
  std::string category;
  std::string problem;
  double value = 0;
};
std::vector<size_t> BalanceByCategory(const std::vector<BalanceItem>& items, double ratio);

}  // namespace ks
