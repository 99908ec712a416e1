#include "serve/reward_function.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ks {

const char* RewardShapeName(RewardShape shape) {
  switch (shape) {
    case RewardShape::kRatio:
      return "ratio";
    case RewardShape::kLogRatio:
      return "log_ratio";
  }
  return "ratio";
}

Result<RewardShape> ParseRewardShape(const std::string& name) {
  if (name == "ratio") return RewardShape::kRatio;
  if (name == "log_ratio") return RewardShape::kLogRatio;
  return Status::InvalidArgument("unknown reward shape '" + name +
                                 "': use ratio (child/parent speedup) or log_ratio "
                                 "(1 + log2 of it)");
}

Status ValidateRewardOptions(const RewardOptions& o) {
  if (!std::isfinite(o.floor)) {
    return Status::InvalidArgument(fmt::format("--reward-floor must be finite, got {}", o.floor));
  }
  if (std::isnan(o.clip) || o.clip < o.floor) {
    return Status::InvalidArgument(fmt::format(
        "--reward-clip ({}) must be a number >= --reward-floor ({})", o.clip, o.floor));
  }
  return Status::Ok();
}

double RewardFromRatio(const RewardOptions& o, double ratio) {
  if (!std::isfinite(ratio) || ratio <= 0) return 0;
  double r = o.shape == RewardShape::kLogRatio ? 1.0 + std::log2(ratio) : ratio;
  return std::min(std::max(r, o.floor), o.clip);
}

}  // namespace ks
