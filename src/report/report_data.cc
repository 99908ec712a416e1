#include "report/report_data.h"

#include <algorithm>
#include <filesystem>

#include "bench/metrics.h"
#include "bench/problem_run.h"
#include "core/file.h"
#include "run/run_problem.h"
#include "store/sqlite_store.h"

namespace ks {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<json> ReadJson(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::optional<double> OptNumber(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

// The roofline of the seed's and the best's evaluations (the best's wins), and their times.
void ReadRoofline(const ProgramRecord& prog, bool is_best, const EvalResult& r, ProblemReport& p) {
  bool is_seed = prog.kind == ProgramKind::kSeed && !p.seed_us;
  if (r.status != EvalStatus::kOk || !r.roofline || (!is_best && !is_seed)) return;
  if (is_seed) p.seed_us = r.cand_us;
  if (is_best) {
    p.best_us = r.cand_us;
    p.best_lazy = r.roofline->lazy && r.roofline->lazy->lazy;
  }
  if (is_best || !p.roofline) {
    p.roofline = r.roofline;
    p.ref_us = r.ref_us;
  }
}

// run.db of a run directory, opened read-only (a run in progress is not disturbed).
Result<std::unique_ptr<Store>> OpenRunDb(const std::string& dir) {
  SqliteStoreOptions options;
  options.read_only = true;
  return OpenSqliteStore(dir + "/run.db", options);
}

// The problem stored with the run (a warning when the file at its path differs from it).
void ReadProblem(Store& store, const std::string& run_id, ProblemReport& p, ReportData& data) {
  Result<RunRecord> run = store.GetRun(run_id);
  if (!run.ok()) {
    data.warnings.push_back(p.name + ": " + run.status().message());
    return;
  }
  p.problem_sha256 = run->problem_sha256;
  if (run->problem_source.empty()) {
    data.warnings.push_back(p.name +
                            ": the run was made before problem sources were stored in run.db; "
                            "the report does not show its problem");
    return;
  }
  Result<RunProblem> problem = ProblemOfRun(*run);
  if (!problem.ok()) {
    data.warnings.push_back(p.name + ": " + problem.status().message());
    return;
  }
  if (!problem->warning.empty()) data.warnings.push_back(p.name + ": " + problem->warning);
  p.problem_source = problem->problem.source;
}

// Fills the per-run figures of `p` from `dir`/run.db: problem, candidates, codes, LLM usage,
// devices.
void ReadRunDb(const std::string& dir, const std::string& run_id, const std::string& best_id,
               ProblemReport& p, ReportData& data) {
  Result<std::unique_ptr<Store>> store = OpenRunDb(dir);
  if (!store.ok()) {
    data.warnings.push_back(p.name + ": " + store.status().message());
    return;
  }
  ReadProblem(**store, run_id, p, data);
  Result<std::vector<ProgramRecord>> programs = (*store)->ProgramsOfRun(run_id);
  if (!programs.ok()) {
    data.warnings.push_back(p.name + ": " + programs.status().message());
    return;
  }
  std::map<std::string, int64_t> counts;
  const ProgramRecord* seed = nullptr;
  const ProgramRecord* first_correct = nullptr;
  const ProgramRecord* best = nullptr;
  for (const ProgramRecord& prog : *programs) {
    if (prog.kind == ProgramKind::kSeed && seed == nullptr) seed = &prog;
    if (prog.id == best_id) best = &prog;
    Result<EvaluationRecord> eval = (*store)->GetEvaluation(prog.id);
    if (!eval.ok()) continue;
    ++counts[EvalStatusName(eval->result.status)];
    if (eval->result.status == EvalStatus::kOk && first_correct == nullptr) first_correct = &prog;
    ReadRoofline(prog, prog.id == best_id, eval->result, p);
    if (prog.id == best_id) p.best_cases = eval->result.cases;
    const json& device = eval->result.device;
    if (device.is_object() && !device.empty() &&
        std::find(data.devices.begin(), data.devices.end(), device) == data.devices.end()) {
      data.devices.push_back(device);
    }
  }
  if (p.candidates_by_status.empty()) p.candidates_by_status = counts;
  const ProgramRecord* base = seed != nullptr ? seed : first_correct;
  if (best != nullptr) {
    p.best_code = best->code;
    p.best_label = "best " + best->id;
  }
  if (base != nullptr) {
    p.base_code = base->code;
    p.base_label = (base == seed ? "seed " : "first correct ") + base->id;
  }
  if (Result<LlmUsage> usage = UsageOfRun(store->get(), run_id); usage.ok()) p.llm = *usage;
}

// --price-in / --price-out as the protocol (or the run's config) recorded them.
LlmPrices PricesOf(const json& protocol) {
  auto price = [&](const char* key) {
    return protocol.contains(key) && protocol[key].is_number() ? protocol[key].get<double>() : 0.0;
  };
  return {price("price_in"), price("price_out")};
}

std::string RunIdOf(const std::string& dir, const json& summary) {
  if (summary.is_object() && summary.contains("run_id") && summary["run_id"].is_string()) {
    return summary["run_id"].get<std::string>();
  }
  std::optional<json> run = ReadJson(dir + "/run.json");
  if (run && run->contains("run_id") && (*run)["run_id"].is_string()) {
    return (*run)["run_id"].get<std::string>();
  }
  return "";
}

void LoadBench(const json& bench, ReportData& data) {
  data.is_bench = true;
  data.kernelsmith_version = bench.value("kernelsmith_version", "");
  data.protocol = bench.value("protocol", json::object());
  data.bench_device = bench.value("device", json::object());
  if (bench.contains("levels") && bench["levels"].is_object()) {
    std::vector<std::pair<int, json>> levels;
    const json& lv = bench["levels"];
    for (auto it = lv.begin(); it != lv.end(); ++it) {
      levels.emplace_back(std::atoi(it.key().c_str()), *it);
    }
    std::sort(levels.begin(), levels.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [level, value] : levels) {
      data.groups.emplace_back("level" + std::to_string(level), value);
    }
  }
  if (bench.contains("overall")) data.groups.emplace_back("overall", bench["overall"]);
  const json problems = bench.value("problems", json::array());
  for (const json& row : problems) {
    ProblemReport p;
    p.name = row.value("name", "");
    p.level = row.value("level", 0);
    p.status = row.value("status", "");
    p.reason = row.value("reason", "");
    p.seed_speedup = OptNumber(row, "seed_speedup");
    p.best_speedup = OptNumber(row, "best_speedup");
    p.rounds_to_best = row.value("rounds_to_best", -1);
    const json counts = row.value("candidates_by_status", json::object());
    if (counts.is_object()) {
      for (auto it = counts.begin(); it != counts.end(); ++it) {
        if (it->is_number()) p.candidates_by_status[it.key()] = it->get<int64_t>();
      }
    }
    if (row.contains("series") && row["series"].is_array()) {
      for (const json& v : row["series"]) p.series.push_back(v.is_number() ? v.get<double>() : 0);
    }
    if (row.contains("verify") && row["verify"].is_object()) p.verify = row["verify"];
    std::string dir = data.run_dir + "/problems/" + p.name;
    if (!fs::exists(dir + "/run.db")) dir = row.value("run_dir", "");
    if (!dir.empty() && fs::exists(dir + "/run.db")) {
      std::optional<json> summary = ReadJson(dir + "/summary.json");
      json s = summary ? *summary : json::object();
      ReadRunDb(dir, RunIdOf(dir, s), s.value("best_program_id", ""), p, data);
    }
    data.problems.push_back(std::move(p));
  }
}

Status LoadSingleRun(const json& summary, ReportData& data) {
  const std::string& dir = data.run_dir;
  std::string run_id = RunIdOf(dir, summary);
  if (run_id.empty()) return Status::InvalidArgument(dir + ": no run id in summary.json");
  data.kernelsmith_version = KS_VERSION;
  ProblemReport p;
  p.name = run_id;
  p.status = "finished";
  p.seed_speedup = OptNumber(summary, "seed_speedup");
  BenchProblemRow row;
  row.outcome.name = run_id;
  Status s = CollectProblemOutcome(dir, run_id, summary.value("rounds", 0), row);
  if (!s.ok()) return s;
  Result<std::unique_ptr<Store>> store = OpenRunDb(dir);
  if (store.ok()) {
    Result<RunRecord> run = (*store)->GetRun(run_id);
    if (run.ok()) {
      p.status = RunStatusName(run->status);
      data.protocol = run->config;
    }
  }
  p.best_speedup = row.outcome.best_speedup;
  p.rounds_to_best = row.rounds_to_best;
  p.series = row.outcome.best_by_round;
  BenchMetrics m = ComputeBenchMetrics({row.outcome});
  data.groups.emplace_back("overall", GroupMetricsToJson(m.overall));
  ReadRunDb(dir, run_id, summary.value("best_program_id", ""), p, data);
  if (fs::exists(dir + "/verify.json")) {
    p.verify = ReadJson(dir + "/verify.json");
    if (!p.verify || !p.verify->is_object()) {
      p.verify.reset();
      data.warnings.push_back(dir + "/verify.json: not valid JSON");
    }
  }
  data.problems.push_back(std::move(p));
  return Status::Ok();
}

}  // namespace

Result<ReportData> LoadReportData(const std::string& run_dir) {
  ReportData data;
  data.run_dir = run_dir;
  if (fs::exists(run_dir + "/bench.json")) {
    std::optional<json> bench = ReadJson(run_dir + "/bench.json");
    if (!bench || !bench->is_object()) {
      return Status::InvalidArgument(run_dir + "/bench.json: not valid JSON");
    }
    LoadBench(*bench, data);
    data.prices = PricesOf(data.protocol);
    return data;
  }
  if (fs::exists(run_dir + "/summary.json")) {
    std::optional<json> summary = ReadJson(run_dir + "/summary.json");
    if (!summary || !summary->is_object()) {
      return Status::InvalidArgument(run_dir + "/summary.json: not valid JSON");
    }
    Status s = LoadSingleRun(*summary, data);
    if (!s.ok()) return s;
    data.prices = PricesOf(data.protocol);
    return data;
  }
  return Status::InvalidArgument(run_dir +
                                 ": neither a bench directory (bench.json) nor an evolve run "
                                 "directory (summary.json)");
}

}  // namespace ks
