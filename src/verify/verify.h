// Re-measuring a kernel before it ships: one evaluation in a fresh worker that also times the
// pair with a second, independent method (the worker's independent.py), and whether the two
// figures agree. Used by `kernelsmith verify` and at the end of `evolve`.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "eval/eval_result.h"
#include "eval/runner.h"

namespace ks {

struct VerifyOutcome {
  EvalResult result;                     // the evaluator's verdict and figure
  std::optional<double> independent;     // the independent method's speedup
  std::optional<double> independent_lo;  // its range over the repeats
  std::optional<double> independent_hi;
  std::string method;             // e.g. "do_bench_cudagraph"
  std::string independent_error;  // why there is no independent figure
  // The evaluator's CI and the independent range overlap (or no CI: within 2 %).
  bool agree = false;
  double difference = 0;  // independent / evaluator - 1

  bool ok() const { return result.status == EvalStatus::kOk && independent && agree; }
  nlohmann::json ToJson() const;
};

// Whether two speedup figures agree: their intervals overlap, or, when either has none, they
// are within 2 % of each other. Used for the evaluator against the independent method, and for a
// run's recorded figure against its re-measurement.
bool FiguresAgree(double a, std::optional<double> a_lo, std::optional<double> a_hi, double b,
                  std::optional<double> b_lo, std::optional<double> b_hi);

// Reads the independent figures out of an evaluation made with `independent_timing`.
VerifyOutcome VerifyFromResult(EvalResult result);

// Evaluates `request` on `runner` with the independent timing switched on.
VerifyOutcome Verify(Runner* runner, EvalRequest request);

// The outcome as stored and printed with --json: ToJson plus the candidate it re-measured and
// the figure a run recorded for it (null when none).
nlohmann::json VerifyRecord(const VerifyOutcome& v, const std::string& candidate,
                            std::optional<double> recorded);

// A few lines for the terminal: both figures, their intervals, and the verdict.
std::string FormatVerify(const VerifyOutcome& v);

}  // namespace ks
