// Features: the dimensions of the MAP-Elites grid and how a program maps to a cell.
//
// A feature dimension has a name, a bin count and either a fixed value range or an adaptive
// one (the smallest range holding every value seen so far). A program's value for a
// dimension is `program.metrics[name]` when present, else a built-in:
//   "complexity" — non-blank, non-comment lines of `program.code` (CodeComplexity),
//   "score"      — `program.fitness`,
// else 0. Values are binned uniformly over the range; values outside it go to the edge bins,
// NaN goes to bin 0.
// Thread-safety: FeatureSpace is not synchronized (Archive serializes access).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archive/program.h"
#include "core/status.h"

namespace ks {

// Coordinates of a grid cell: one bin index per feature dimension, in dimension order.
using Cell = std::vector<int>;

struct FeatureDimension {
  std::string name;  // "complexity", "score", or a key of Program::metrics
  int bins = 10;     // number of bins, ≥ 1
  // Fixed range [min, max] when both are set (min < max); adaptive when both are unset.
  std::optional<double> min;
  std::optional<double> max;
};

// complexity (10 bins) × score (10 bins), both adaptive.
std::vector<FeatureDimension> DefaultFeatures();

// OK when there is at least one dimension, names are non-empty and distinct, bins ≥ 1 and
// each range is either unset or finite with min < max; otherwise InvalidArgument naming the
// offending dimension.
Status ValidateFeatures(const std::vector<FeatureDimension>& dims);

// Lines of `code` holding something other than whitespace or a comment (a line whose first
// non-blank characters are `#` or `//`).
int CodeComplexity(std::string_view code);

// The program's value for the dimension named `name` (see the header comment).
double FeatureValue(const Program& program, const std::string& name);

// The bin of `value` among `bins` equal bins over [lo, hi]: floor((value-lo)/(hi-lo)*bins),
// clamped to [0, bins-1]; hi itself falls in the last bin. When hi ≤ lo, or value is NaN, 0.
int BinIndex(double value, double lo, double hi, int bins);

class FeatureSpace {
 public:
  // `dims` must have passed ValidateFeatures.
  explicit FeatureSpace(std::vector<FeatureDimension> dims);

  struct Range {
    double lo = 0;
    double hi = 0;
    bool seen = false;  // adaptive dimensions: whether any finite value was observed
  };

  // Widens the adaptive ranges to include the program's finite values. Returns true when a
  // range changed, i.e. when cells computed before may now differ.
  bool Observe(const Program& program);
  // The program's cell under the current ranges.
  Cell CellOf(const Program& program) const;

  const std::vector<FeatureDimension>& dims() const { return dims_; }
  // The range currently used for dimension i (the fixed one, or what was observed).
  Range range(size_t i) const;

  // Observed adaptive ranges, for snapshots; RangesFromJson restores them (InvalidArgument
  // when the array does not match the dimensions).
  nlohmann::json RangesToJson() const;
  Status RangesFromJson(const nlohmann::json& j);

 private:
  std::vector<FeatureDimension> dims_;
  std::vector<Range> observed_;  // per dimension; used only by adaptive ones
};

}  // namespace ks
