// Bench metrics (docs/metrics.md): from one row per problem, the per-level and
// overall figures of the paper's protocol — corr, fast_p, avg_amsr, the geometric-mean speedup,
// the same after round 1 only, and the best-score-versus-round series.
// Thread-safety: functions only.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ks {

// The thresholds p of fast_p.
inline constexpr double kFastThresholds[] = {1.0, 1.2, 1.5, 2.0};
inline constexpr int kNumFastThresholds = 4;

// What one problem of a bench produced.
struct ProblemOutcome {
  std::string name;  // e.g. "level1/19_ReLU"
  int level = 0;     // 0: unleveled
  // Skipped problems (e.g. no usable seed for the tuner) were not attempted: they are listed
  // but count in no metric's denominator.
  bool skipped = false;
  // Speedup of the best correct, non-hacked kernel (the engine's verified best); unset: none.
  std::optional<double> best_speedup;
  // The same over the seed and round 1 only; unset: none correct by then.
  std::optional<double> round1_speedup;
  // Element r: speedup of the best correct kernel evaluated in rounds 0..r, 0 when none.
  std::vector<double> best_by_round;
  // Roofline of the best kernel's evaluation: floor time / measured time in % for the best
  // kernel and for the reference; unset when no floor was measured.
  std::optional<double> best_pct_of_floor;
  std::optional<double> ref_pct_of_floor;
};

// The figures of one set of best speedups (one per problem; unset: no correct kernel).
struct MetricSet {
  int problems = 0;  // the denominator
  int correct = 0;
  // All unset when `problems` is 0; geomean_speedup also when `correct` is 0.
  std::optional<double> corr;
  std::optional<double> fast[kNumFastThresholds];
  std::optional<double> avg_amsr;
  std::optional<double> geomean_speedup;
};

MetricSet ComputeMetricSet(const std::vector<std::optional<double>>& best_speedups);

// The metrics of a group of problems (a level, or the whole suite).
struct GroupMetrics {
  int problems = 0;  // listed, skipped included
  int skipped = 0;
  MetricSet final_round;  // over all rounds
  MetricSet round1;       // after round 1 only
  // Element r: mean over the attempted problems of best_by_round[r] (a shorter series is
  // extended with its last value; a problem without one counts 0).
  std::vector<double> series;
  // Means over the problems with a measured floor (`floor_problems` of them); unset if none.
  int floor_problems = 0;
  std::optional<double> mean_pct_of_floor;
  std::optional<double> mean_ref_pct_of_floor;
};

GroupMetrics ComputeGroupMetrics(const std::vector<ProblemOutcome>& outcomes);

struct BenchMetrics {
  std::map<int, GroupMetrics> levels;  // by level, only levels with a listed problem
  GroupMetrics overall;
};

BenchMetrics ComputeBenchMetrics(const std::vector<ProblemOutcome>& outcomes);

// Metric names as in bench.json: "fast_1.0", "fast_1.2", "fast_1.5", "fast_2.0".
std::string FastName(int index);

// {"problems", "attempted", "skipped", "correct", "corr", "fast_1.0", ..., "avg_amsr",
//  "geomean_speedup", and each figure again with the suffix "_round1", "series",
//  "floor_problems", "mean_pct_of_floor", "mean_ref_pct_of_floor"}; an unset figure is null.
nlohmann::json GroupMetricsToJson(const GroupMetrics& m);

// The printed table: one row per level and one overall, after all rounds and after round 1.
std::string FormatMetricsTable(const BenchMetrics& m);

}  // namespace ks
