// EvalResult: the one record every evaluated candidate gets (docs/eval-result.md).
//
// The worker fills most fields; the engine adds identity, duration, output tails and the
// feedback text. `stages` and `device` are kept as JSON as the worker produced them.
// Thread-safety: values.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/roofline.h"

namespace ks {

inline constexpr int kEvalResultSchemaVersion = 1;

enum class EvalStatus {
  kOk,
  kCompileError,
  kRuntimeError,
  kIncorrect,
  kHacked,
  kTimeout,
  kCrash,
  kInfraError,
};

// "ok", "compile_error", ... as in the JSON schema.
const char* EvalStatusName(EvalStatus s);
// Parses a status name; InvalidArgument for an unknown one.
Result<EvalStatus> ParseEvalStatus(const std::string& name);

struct Finding {
  std::string kind;      // e.g. "torch_compute", "no_custom_kernel", "evaluator_tampering"
  std::string detail;    // what was seen, for a person and for the proposer
  std::string severity;  // "info", "warn" or "reject"
};

struct FileIdentity {
  std::string path;
  std::string sha256;
};

// The candidate timed against a baseline candidate instead of the reference (a request with
// `baseline_source`): both in the same worker, interleaved.
struct BaselineComparison {
  std::string path;
  double speedup = 0;  // baseline time / candidate time: > 1 means the candidate is faster
  std::optional<double> speedup_ci_lo;
  std::optional<double> speedup_ci_hi;
  std::optional<double> baseline_us;
  std::optional<double> cand_us;
};

// One input case of a problem that declares several (`get_input_cases()`): its verdict and
// timing. The result's speedup is the weighted geometric mean of the cases' speedups.
struct CaseResult {
  std::string name;
  double weight = 1;   // how often the case runs in the workload
  std::string status;  // an EvalStatus name, or "not_run" (the evaluation stopped before it)
  std::string message;
  std::optional<double> speedup;
  std::optional<double> speedup_ci_lo;
  std::optional<double> speedup_ci_hi;
  std::optional<double> ref_us;
  std::optional<double> cand_us;
  std::optional<double> cv;
  nlohmann::json stages = nlohmann::json::object();  // as the worker produced them
  nlohmann::json roofline;                           // the worker's raw record, or null
};

struct EvalResult {
  EvalStatus status = EvalStatus::kInfraError;
  std::string message;  // one line: why the status is what it is; empty for ok
  std::string backend;
  FileIdentity problem;
  FileIdentity candidate;
  std::optional<double> speedup;
  std::optional<double> speedup_ci_lo;
  std::optional<double> speedup_ci_hi;
  std::optional<double> ref_us;
  std::optional<double> cand_us;
  std::optional<double> cv;
  std::optional<BaselineComparison> vs_baseline;  // only for requests with a baseline
  std::vector<CaseResult> cases;  // a problem's declared input cases; empty for a plain problem
  std::vector<Finding> findings;
  // How far from the device's measured limits (timed requests; docs/roofline.md).
  std::optional<Roofline> roofline;
  nlohmann::json stages = nlohmann::json::object();
  nlohmann::json device = nlohmann::json::object();
  double duration_s = 0;
  // Seconds the evaluation held its device exclusively (the timing lease): the GPU (or CPU)
  // time it cost other evaluations on that device.
  double device_seconds = 0;
  // Seconds the evaluation had work on its GPU: the sum of its worker stages' durations (load,
  // correctness, audit, timing) when the device is a GPU, else 0 (docs/eval-result.md).
  double gpu_seconds = 0;
  std::string stdout_tail;
  std::string stderr_tail;
  std::string feedback;
  // The cluster worker that measured it (`kernelsmith worker --name`); empty: a local pool.
  std::string evaluated_by;

  bool correct_and_clean() const { return status == EvalStatus::kOk; }

  // Serializes with schema_version; the inverse of FromJson.
  nlohmann::json ToJson() const;
  // Parses the worker's `result` object (or a full stored EvalResult). Unknown fields are
  // ignored; a missing or unknown status is a Protocol error naming the field.
  static Result<EvalResult> FromJson(const nlohmann::json& j);
  // A result for a failure outside the worker's verdict (timeout, crash, infra).
  static EvalResult Failure(EvalStatus status, std::string message);
};

}  // namespace ks
