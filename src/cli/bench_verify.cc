#include "cli/bench_verify.h"

#include <fmt/format.h>

#include "verify/verify_cells.h"

namespace ks {

std::optional<std::string> RowNotVerified(const BenchProblemRow& row) {
  if (row.status == "skipped") return "the problem was skipped";
  if (row.status == "failed") return "the run failed";
  if (row.status == "waiting") return "the run waits for answers (re-measured when it finishes)";
  if (row.status != "finished") return "the run did not finish";
  return std::nullopt;
}

void VerifyBenchRows(std::vector<BenchProblemRow>& rows, const BenchVerifyOptions& options,
                     const std::function<void(size_t)>& after_each) {
  for (size_t i = 0; i < rows.size(); ++i) {
    BenchProblemRow& row = rows[i];
    if (std::optional<std::string> why = RowNotVerified(row)) {
      row.verify = FinalVerify::NotVerified(*why).ToJson();
    } else {
      FinalVerifyInput in;
      in.python = options.python;
      in.backend = options.backend;
      in.run_dir = row.run_dir;
      in.reuse_stored = true;
      in.measure = options.enabled;
      in.start_runner = options.start_runner;
      row.verify = VerifyRunBest(in).ToJson();
    }
    if (after_each) after_each(i);
  }
}

std::string FormatVerifyTable(const std::vector<BenchProblemRow>& rows) {
  std::string out =
      "best kernels re-measured in a fresh worker (the metrics above use the runs' "
      "figures):\n";
  out += fmt::format("  {:<28} {:>9}  {:<22} {:<22} {}\n", "problem", "run", "re-measured",
                     "independent", "verdict");
  int verified = 0, flagged = 0, not_verified = 0;
  for (const BenchProblemRow& r : rows) {
    VerifyCells c = DescribeVerify(r.verify);
    std::string run =
        r.outcome.best_speedup ? fmt::format("{:.3f}x", *r.outcome.best_speedup) : std::string("-");
    out += fmt::format("{} {:<28} {:>9}  {:<22} {:<22} {}\n", c.flagged ? "!" : " ", r.outcome.name,
                       run, c.remeasured, c.independent, c.verdict);
    if (r.verify.is_object() && r.verify.value("state", "") == "verified") ++verified;
    if (c.flagged) ++flagged;
    if (!r.verify.is_object() || r.verify.value("state", "") == "not_verified") ++not_verified;
  }
  out += fmt::format(
      "verified {} of {} problem(s); {} not confirming the run's figure (marked !), {} not "
      "verified\n",
      verified, rows.size(), flagged, not_verified);
  return out;
}

}  // namespace ks
