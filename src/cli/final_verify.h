// The end of a run that found a timed best kernel: the kernel is re-measured the way
// `kernelsmith verify` does it (a fresh worker, the evaluator's timing and an independent
// steady-state method), the outcome printed and written to RUN_DIR/verify.json, which the
// report shows. The run itself is already stored: a failure here is reported, never fatal.
// Thread-safety: called from the command's thread.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "verify/verify.h"

namespace ks {

struct FinalVerifyInput {
  std::string python;  // --python, or empty for $KS_PYTHON / python3
  std::string backend;
  std::string problem_path;
  std::string problem_source;
  std::string run_dir;  // holds best.py; verify.json is written there
  std::string best_program_id;
  std::optional<double> recorded;  // the run's best speedup
};

// Verifies RUN_DIR/best.py; returns the outcome written to verify.json.
Result<VerifyOutcome> VerifyRunBest(const FinalVerifyInput& in);

}  // namespace ks
