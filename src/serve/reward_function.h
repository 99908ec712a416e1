// The reward an RL trainer gets for one completion: 0 for anything that is not a correct,
// non-hacked kernel; otherwise a function of the speedup over the parent (docs/training.md).
// Thread-safety: pure functions and values.
#pragma once

#include <limits>
#include <optional>
#include <string>

#include "core/status.h"

namespace ks {

enum class RewardShape {
  kRatio,     // r = child_speedup / parent_speedup (the paper's speedup ratio); default
  kLogRatio,  // r = 1 + log2(ratio): 1 at parity, +1 per doubling, 0 at half the speed
};

struct RewardOptions {
  RewardShape shape = RewardShape::kRatio;
  // Lower bound of the reward of a correct kernel (after shaping). 0: a correct kernel that is
  // much slower than its parent may earn as little as a failure.
  double floor = 0;
  // Upper bound of the reward (after shaping); infinity: none. Clipping keeps a lucky timing
  // outlier from dominating a batch's advantages.
  double clip = std::numeric_limits<double>::infinity();
};

// "ratio" or "log_ratio".
const char* RewardShapeName(RewardShape shape);
// Parses a shape name; InvalidArgument naming the accepted values for an unknown one.
Result<RewardShape> ParseRewardShape(const std::string& name);
// InvalidArgument when floor or clip is not finite / clip < floor, naming the flag.
Status ValidateRewardOptions(const RewardOptions& options);

// The reward of a correct, non-hacked child whose speedup over its parent is `ratio`
// (child_speedup / parent_speedup measured in the same service). A ratio that is not a
// positive finite number earns 0.
double RewardFromRatio(const RewardOptions& options, double ratio);

}  // namespace ks
