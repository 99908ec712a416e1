#include "archive/features.h"

#include <cmath>
#include <set>
#include <utility>

namespace ks {

std::vector<FeatureDimension> DefaultFeatures() {
  return {FeatureDimension{"complexity", 10, std::nullopt, std::nullopt},
          FeatureDimension{"score", 10, std::nullopt, std::nullopt}};
}

Status ValidateFeatures(const std::vector<FeatureDimension>& dims) {
  if (dims.empty()) {
    return Status::InvalidArgument(
        "archive features: at least one feature dimension is needed (default: complexity, "
        "score)");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < dims.size(); ++i) {
    const FeatureDimension& d = dims[i];
    std::string where = "archive feature #" + std::to_string(i) + " '" + d.name + "'";
    if (d.name.empty()) return Status::InvalidArgument(where + ": the name is empty");
    if (!names.insert(d.name).second) {
      return Status::InvalidArgument(where + ": the name appears twice");
    }
    if (d.bins < 1) {
      return Status::InvalidArgument(where + ": bins must be ≥ 1, got " + std::to_string(d.bins));
    }
    if (d.min.has_value() != d.max.has_value()) {
      return Status::InvalidArgument(where +
                                     ": set both min and max (fixed range) or neither "
                                     "(adaptive range)");
    }
    if (d.min && !(std::isfinite(*d.min) && std::isfinite(*d.max) && *d.min < *d.max)) {
      return Status::InvalidArgument(where + ": the range needs finite min < max, got [" +
                                     std::to_string(*d.min) + ", " + std::to_string(*d.max) + "]");
    }
  }
  return Status::Ok();
}

int CodeComplexity(std::string_view code) {
  int lines = 0;
  size_t start = 0;
  while (start <= code.size()) {
    size_t end = code.find('\n', start);
    if (end == std::string_view::npos) end = code.size();
    std::string_view line = code.substr(start, end - start);
    size_t first = line.find_first_not_of(" \t\r\f\v");
    if (first != std::string_view::npos) {
      std::string_view rest = line.substr(first);
      bool comment = rest.starts_with("#") || rest.starts_with("//");
      if (!comment) ++lines;
    }
    start = end + 1;
  }
  return lines;
}

double FeatureValue(const Program& program, const std::string& name) {
  auto it = program.metrics.find(name);
  if (it != program.metrics.end()) return it->second;
  if (name == "complexity") return CodeComplexity(program.code);
  if (name == "score") return program.fitness;
  return 0;
}

int BinIndex(double value, double lo, double hi, int bins) {
  if (std::isnan(value) || !(hi > lo) || bins <= 1) return 0;
  if (value <= lo) return 0;
  if (value >= hi) return bins - 1;
  double bin = std::floor((value - lo) / (hi - lo) * bins);
  if (bin < 0) return 0;
  if (bin > bins - 1) return bins - 1;
  return static_cast<int>(bin);
}

FeatureSpace::FeatureSpace(std::vector<FeatureDimension> dims)
    : dims_(std::move(dims)), observed_(dims_.size()) {}

bool FeatureSpace::Observe(const Program& program) {
  bool changed = false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i].min) continue;  // fixed range
    double v = FeatureValue(program, dims_[i].name);
    if (!std::isfinite(v)) continue;
    Range& r = observed_[i];
    if (!r.seen) {
      r = Range{v, v, true};
      changed = true;
    } else if (v < r.lo) {
      r.lo = v;
      changed = true;
    } else if (v > r.hi) {
      r.hi = v;
      changed = true;
    }
  }
  return changed;
}

FeatureSpace::Range FeatureSpace::range(size_t i) const {
  if (dims_[i].min) return Range{*dims_[i].min, *dims_[i].max, true};
  return observed_[i];
}

Cell FeatureSpace::CellOf(const Program& program) const {
  Cell cell(dims_.size(), 0);
  for (size_t i = 0; i < dims_.size(); ++i) {
    Range r = range(i);
    if (!r.seen) continue;
    cell[i] = BinIndex(FeatureValue(program, dims_[i].name), r.lo, r.hi, dims_[i].bins);
  }
  return cell;
}

nlohmann::json FeatureSpace::RangesToJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < dims_.size(); ++i) {
    const Range& r = observed_[i];
    out.push_back({{"name", dims_[i].name}, {"seen", r.seen}, {"lo", r.lo}, {"hi", r.hi}});
  }
  return out;
}

Status FeatureSpace::RangesFromJson(const nlohmann::json& j) {
  if (!j.is_array() || j.size() != dims_.size()) {
    return Status::InvalidArgument("archive snapshot: 'feature_ranges' must be an array of " +
                                   std::to_string(dims_.size()) + " ranges");
  }
  std::vector<Range> ranges(dims_.size());
  try {
    for (size_t i = 0; i < dims_.size(); ++i) {
      if (j[i].at("name").get<std::string>() != dims_[i].name) {
        return Status::InvalidArgument("archive snapshot: feature range #" + std::to_string(i) +
                                       " is for '" + j[i].at("name").get<std::string>() +
                                       "', expected '" + dims_[i].name + "'");
      }
      ranges[i] = Range{j[i].at("lo").get<double>(), j[i].at("hi").get<double>(),
                        j[i].at("seen").get<bool>()};
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("archive snapshot: feature_ranges: ") + e.what());
  }
  observed_ = std::move(ranges);
  return Status::Ok();
}

}  // namespace ks
