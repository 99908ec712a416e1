// The end of a bench: every problem's best kernel re-measured the way `evolve` re-measures its
// own (cli/final_verify.h: a fresh worker, the evaluator's timing and an independent method),
// one problem after another once every problem has run, so no search shares the machine with a
// timing. The outcome goes to each problem's verify.json and row (bench.json); the metrics keep
// using the figures the runs recorded. A resumed bench takes a problem's verify.json as it is
// when it re-measured the same best kernel.
// Thread-safety: called from the command's thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/problem_run.h"
#include "cli/final_verify.h"

namespace ks {

struct BenchVerifyOptions {
  // false (--no-verify): nothing is measured; a problem keeps a stored re-measurement of its
  // current best, any other is "not verified".
  bool enabled = true;
  std::string python;   // --python, or empty for $KS_PYTHON / python3
  std::string backend;  // the bench's backend (resolved)
  // Unset: one fresh worker per problem. Tests set a fake (FinalVerifyInput::start_runner).
  std::function<Result<std::unique_ptr<Runner>>(const std::string& backend)> start_runner;
};

// Why `row`'s best kernel is not re-measured, judged from the row alone (a skipped, failed or
// waiting problem); nullopt when its run is to be looked at.
std::optional<std::string> RowNotVerified(const BenchProblemRow& row);

// Fills the `verify` of every row in order; `after_each(i)` runs after row i is filled (the
// bench rewrites bench.json and prints a line there). Never fails: a failure is the row's.
void VerifyBenchRows(std::vector<BenchProblemRow>& rows, const BenchVerifyOptions& options,
                     const std::function<void(size_t)>& after_each);

// The printed table: per problem the run's best figure, the re-measured one, the independent
// one and the verdict (a line starting with "!" where they do not confirm the run's figure),
// then a count.
std::string FormatVerifyTable(const std::vector<BenchProblemRow>& rows);

}  // namespace ks
