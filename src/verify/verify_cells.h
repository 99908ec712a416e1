// How a stored re-measurement reads in a table: the JSON a run's end writes per best kernel
// (cli/final_verify.h FinalVerify::ToJson: verify.json plus "state" and "reason") turned into
// the cells the bench's terminal table and the HTML report show, with one flag for a result
// that does not confirm the recorded figure.
// Thread-safety: functions only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ks {

struct VerifyCells {
  std::string remeasured;   // "1.093x [1.071, 1.115]" (the evaluator's method, fresh), or "-"
  std::string independent;  // "1.088x [1.080, 1.097]" (the independent method), or "-"
  std::string method;       // the independent method, e.g. "do_bench_cudagraph"; or ""
  // "agree", "DIFFER: ...", "not verified: <reason>", "verify failed: <reason>", ...
  std::string verdict;
  // The re-measurement does not confirm the figure the metrics use: the methods differ, the
  // recorded figure is outside the re-measured interval, the kernel failed again, there is no
  // independent figure, or the re-measurement could not run.
  bool flagged = false;
};

// `verify` may be null (not reached yet: the bench stopped before its re-measurements) or a
// verify.json without "state" (a re-measurement).
VerifyCells DescribeVerify(const nlohmann::json& verify);

}  // namespace ks
