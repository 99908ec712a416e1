#include "bench/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ks {

MetricSet ComputeMetricSet(const std::vector<std::optional<double>>& best_speedups) {
  MetricSet m;
  m.problems = static_cast<int>(best_speedups.size());
  if (m.problems == 0) return m;
  int fast[kNumFastThresholds] = {0, 0, 0, 0};
  double amsr_sum = 0;
  double log_sum = 0;
  for (const std::optional<double>& best : best_speedups) {
    if (!best) continue;
    ++m.correct;
    for (int i = 0; i < kNumFastThresholds; ++i) {
      if (*best > kFastThresholds[i]) ++fast[i];
    }
    if (*best >= 1.0) amsr_sum += *best;
    log_sum += std::log(std::max(*best, 1e-300));
  }
  const double n = m.problems;
  m.corr = m.correct / n;
  for (int i = 0; i < kNumFastThresholds; ++i) m.fast[i] = fast[i] / n;
  m.avg_amsr = amsr_sum / n;
  if (m.correct > 0) m.geomean_speedup = std::exp(log_sum / m.correct);
  return m;
}

GroupMetrics ComputeGroupMetrics(const std::vector<ProblemOutcome>& outcomes) {
  GroupMetrics g;
  g.problems = static_cast<int>(outcomes.size());
  std::vector<std::optional<double>> finals;
  std::vector<std::optional<double>> round1;
  size_t length = 0;
  for (const ProblemOutcome& o : outcomes) {
    if (o.skipped) {
      ++g.skipped;
      continue;
    }
    finals.push_back(o.best_speedup);
    round1.push_back(o.round1_speedup);
    length = std::max(length, o.best_by_round.size());
  }
  double best_floor = 0, ref_floor = 0;
  for (const ProblemOutcome& o : outcomes) {
    if (o.skipped || !o.best_pct_of_floor || !o.ref_pct_of_floor) continue;
    ++g.floor_problems;
    best_floor += *o.best_pct_of_floor;
    ref_floor += *o.ref_pct_of_floor;
  }
  if (g.floor_problems > 0) {
    g.mean_pct_of_floor = best_floor / g.floor_problems;
    g.mean_ref_pct_of_floor = ref_floor / g.floor_problems;
  }
  g.final_round = ComputeMetricSet(finals);
  g.round1 = ComputeMetricSet(round1);
  if (finals.empty()) return g;
  g.series.assign(length, 0.0);
  for (const ProblemOutcome& o : outcomes) {
    if (o.skipped) continue;
    for (size_t r = 0; r < length; ++r) {
      if (o.best_by_round.empty()) break;
      g.series[r] += r < o.best_by_round.size() ? o.best_by_round[r] : o.best_by_round.back();
    }
  }
  for (double& v : g.series) v /= static_cast<double>(finals.size());
  return g;
}

BenchMetrics ComputeBenchMetrics(const std::vector<ProblemOutcome>& outcomes) {
  BenchMetrics b;
  std::map<int, std::vector<ProblemOutcome>> by_level;
  for (const ProblemOutcome& o : outcomes) by_level[o.level].push_back(o);
  for (const auto& [level, group] : by_level) b.levels[level] = ComputeGroupMetrics(group);
  b.overall = ComputeGroupMetrics(outcomes);
  return b;
}

std::string FastName(int index) { return fmt::format("fast_{:.1f}", kFastThresholds[index]); }

namespace {

nlohmann::json Figure(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

void PutMetricSet(const MetricSet& m, const std::string& suffix, nlohmann::json& out) {
  out["corr" + suffix] = Figure(m.corr);
  for (int i = 0; i < kNumFastThresholds; ++i) out[FastName(i) + suffix] = Figure(m.fast[i]);
  out["avg_amsr" + suffix] = Figure(m.avg_amsr);
  out["geomean_speedup" + suffix] = Figure(m.geomean_speedup);
}

std::string Cell(const std::optional<double>& v, bool ratio) {
  if (!v) return "-";
  return ratio ? fmt::format("{:.1f}%", 100 * *v) : fmt::format("{:.3f}", *v);
}

void AppendRows(const BenchMetrics& b, bool round1, std::string& out) {
  out += fmt::format("{:<9} {:>8} {:>7} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "level",
                     "problems", "skipped", "corr", "fast_1.0", "fast_1.2", "fast_1.5", "fast_2.0",
                     "avg_amsr", "geomean");
  auto row = [&](const std::string& name, const GroupMetrics& g) {
    const MetricSet& m = round1 ? g.round1 : g.final_round;
    out += fmt::format("{:<9} {:>8} {:>7} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n", name,
                       g.problems, g.skipped, Cell(m.corr, true), Cell(m.fast[0], true),
                       Cell(m.fast[1], true), Cell(m.fast[2], true), Cell(m.fast[3], true),
                       Cell(m.avg_amsr, false), Cell(m.geomean_speedup, false));
  };
  for (const auto& [level, g] : b.levels) {
    row(level == 0 ? std::string("unleveled") : fmt::format("level{}", level), g);
  }
  row("overall", b.overall);
}

}  // namespace

nlohmann::json GroupMetricsToJson(const GroupMetrics& g) {
  nlohmann::json out = nlohmann::json::object();
  out["problems"] = g.problems;
  out["attempted"] = g.problems - g.skipped;
  out["skipped"] = g.skipped;
  out["correct"] = g.final_round.correct;
  PutMetricSet(g.final_round, "", out);
  PutMetricSet(g.round1, "_round1", out);
  out["series"] = g.series;
  out["floor_problems"] = g.floor_problems;
  out["mean_pct_of_floor"] = Figure(g.mean_pct_of_floor);
  out["mean_ref_pct_of_floor"] = Figure(g.mean_ref_pct_of_floor);
  return out;
}

std::string FormatMetricsTable(const BenchMetrics& b) {
  std::string out = "after all rounds:\n";
  AppendRows(b, false, out);
  out += "after round 1:\n";
  AppendRows(b, true, out);
  if (b.overall.floor_problems == 0) return out;
  out += "% of the roofline floor (mean over problems with a measured floor), best / reference:\n";
  auto floor_row = [&](const std::string& name, const GroupMetrics& g) {
    if (g.floor_problems == 0) return;
    out += fmt::format("{:<9} {:>3} problems  {:>6.1f}% / {:.1f}%\n", name, g.floor_problems,
                       *g.mean_pct_of_floor, *g.mean_ref_pct_of_floor);
  };
  for (const auto& [level, g] : b.levels) {
    floor_row(level == 0 ? std::string("unleveled") : fmt::format("level{}", level), g);
  }
  floor_row("overall", b.overall);
  return out;
}

}  // namespace ks
