// What the report shows, read from a run directory: a bench (bench.json and
// problems/levelN/<stem>/run.db) or a single evolve run (summary.json, run.json and run.db).
// Thread-safety: functions only.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/eval_result.h"
#include "eval/roofline.h"
#include "usage/llm_usage.h"

namespace ks {

struct ProblemReport {
  std::string name;  // "level1/19_ReLU" (or the run id of a single run)
  int level = 0;
  std::string status;  // finished, skipped, failed, waiting
  std::string reason;
  std::optional<double> seed_speedup;
  std::optional<double> best_speedup;
  int rounds_to_best = -1;
  std::map<std::string, int64_t> candidates_by_status;
  std::vector<double> series;  // best speedup by round
  std::string best_code;
  std::string base_code;   // the seed, or the first correct candidate
  std::string base_label;  // "seed p00001" / "first correct p00004"; empty: none
  std::string best_label;
  std::vector<CaseResult> best_cases;  // the best's per-shape results (multi-shape problems)
  // The problem's source as stored in run.db (empty: a run made before sources were stored)
  // and its SHA-256.
  std::string problem_source;
  std::string problem_sha256;
  LlmUsage llm;
  // The best kernel re-measured at the end: a bench row's `verify` (its "state" says whether
  // it was), or a single run's verify.json (no state: re-measured); absent: never looked at.
  std::optional<nlohmann::json> verify;
  // The roofline of the best kernel's evaluation (else the seed's), and the times it plots.
  std::optional<Roofline> roofline;
  std::optional<double> ref_us, seed_us, best_us;
  bool best_lazy = false;  // the best kernel leaves most of the work to torch ops
};

struct ReportData {
  std::string run_dir;
  bool is_bench = false;
  std::string kernelsmith_version;
  nlohmann::json protocol = nlohmann::json::object();  // bench protocol or the run's config
  LlmPrices prices;                                    // protocol's price_in / price_out
  nlohmann::json bench_device = nlohmann::json::object();
  // Group name ("level1", ..., "overall") → GroupMetricsToJson's object.
  std::vector<std::pair<std::string, nlohmann::json>> groups;
  std::vector<ProblemReport> problems;
  std::vector<nlohmann::json> devices;  // distinct EvalResult.device objects
  std::vector<std::string> warnings;    // what could not be read
};

// Reads `run_dir`; InvalidArgument when it holds neither bench.json nor summary.json.
Result<ReportData> LoadReportData(const std::string& run_dir);

}  // namespace ks
