// The end of a run (an `evolve`, or each problem of a `bench`): the run's best kernel is
// re-measured the way `kernelsmith verify` does it (a fresh worker, the evaluator's timing and an
// independent steady-state method) and the outcome written to RUN_DIR/verify.json, which the
// report shows. Only a timed kernel the run evolved is re-measured: not a run without a correct
// kernel, nor one whose best was never timed, nor one whose best is still the seed it was given.
// The run itself is already stored: a failure here is an outcome, never an error of the run.
// Thread-safety: functions; one VerifyRunBest at a time per run directory.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.h"
#include "eval/runner.h"
#include "store/store.h"
#include "verify/verify.h"

namespace ks {

struct FinalVerifyInput {
  std::string python;   // --python, or empty for $KS_PYTHON / python3
  std::string backend;  // the run's backend (resolved: triton, cuda or cpu)
  std::string run_dir;  // holds run.json, run.db and best.py; verify.json is written there
  // Take an existing verify.json as it is when it re-measured the same best program (a resumed
  // bench); false: measure again.
  bool reuse_stored = false;
  // false (--no-verify): nothing is measured; with reuse_stored a stored verify.json of the
  // same best is still taken, otherwise the outcome is kNotVerified "--no-verify".
  bool measure = true;
  // Starts the runner the kernel is evaluated on; unset: one fresh worker (StartOneOffPool).
  // Tests set a fake here.
  std::function<Result<std::unique_ptr<Runner>>(const std::string& backend)> start_runner;
};

struct FinalVerify {
  enum class State {
    kVerified,     // re-measured (now, or earlier when `reused`): `record` is verify.json's
    kNotVerified,  // nothing to re-measure, or skipped: `reason` says why
    kFailed,       // the re-measurement could not run: `reason` says why
  };
  State state = State::kNotVerified;
  std::string reason;
  nlohmann::json record;                 // kVerified: verify.json's object
  std::optional<VerifyOutcome> outcome;  // kVerified now (not reused): the full outcome
  bool reused = false;                   // kVerified: read from an earlier verify.json

  static FinalVerify NotVerified(std::string reason);

  // {"state": "verified" | "not_verified" | "failed", "reason", "reused", and for a verified
  // kernel every key of verify.json (status, speedup, speedup_ci95, independent_speedup,
  // independent_range, independent_method, agree, difference, recorded_speedup,
  // recorded_ci95, recorded_within, program_id, candidate, ...)}.
  nlohmann::json ToJson() const;
};

const char* FinalVerifyStateName(FinalVerify::State state);

// Why the best kernel of a run with engine summary `summary` is not re-measured; nullopt when
// it is to be. `best_kind` is the kind of the best program (nullopt: unknown).
std::optional<std::string> WhyNotVerified(const nlohmann::json& summary,
                                          std::optional<ProgramKind> best_kind);

// Re-measures the best kernel of the run in `in.run_dir` (its problem as stored in run.db) and
// writes verify.json. Never fails: a run with nothing to re-measure is kNotVerified, a
// re-measurement that could not run (no worker, unreadable run, infrastructure error) kFailed.
FinalVerify VerifyRunBest(const FinalVerifyInput& in);

}  // namespace ks
