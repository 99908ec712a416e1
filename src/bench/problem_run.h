// One problem of a bench: the evolve run of its problem (set up as `evolve` sets one up,
// run/run_setup.h) under the bench's options in RUN_DIR/problems/<level>/<stem>/ (run.json,
// run.db, best.py, summary.json, run.log), resumed when it was started earlier and taken as it
// is when it ran all its rounds; and the outcome read back from its run.db for the metrics.
// Thread-safety: RunBenchProblem may run for several problems at once when the shared Runner
// and LLM client are thread-safe (WorkerPool and LlmClient implementations are).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bench/metrics.h"
#include "bench/suite.h"
#include "run/run_options.h"
#include "run/run_setup.h"

namespace ks {

struct BenchProblemRow {
  ProblemOutcome outcome;
  // "finished", "skipped" (not attempted: `reason` says why), "failed" (an error: `reason`),
  // or "waiting" (the files proposer waits for `waiting_answers` answers).
  std::string status;
  int waiting_answers = 0;
  std::string reason;
  std::string problem_path;
  std::string seed_path;  // "" when the proposer translated the reference
  std::string run_dir;    // the problem's run directory ("" when skipped)
  bool reused = false;    // a finished run found on resume, not rerun
  nlohmann::json summary = nlohmann::json::object();  // the engine's summary
  int rounds_to_best = -1;  // first round whose best equals the final best; -1: none
  // The best kernel re-measured at the bench's end (cli/final_verify.h FinalVerify::ToJson);
  // null until then. Shown beside the figures; the metrics never use it.
  nlohmann::json verify = nullptr;

  nlohmann::json ToJson() const;
};

// Runs (or resumes, or reuses) the problem's evolve run in `problem_dir` under `options` (the
// seed kernel is the problem's own, SeedKernelPath) with the proposer of `spec`. Never fails:
// errors are the row's status and reason.
BenchProblemRow RunBenchProblem(const SuiteProblem& problem, const std::string& problem_dir,
                                const RunOptions& options, const ProposerSpec& spec,
                                const RunShared& shared);

// Fills `row` (outcome, summary, rounds_to_best) from the run `run_id` of `problem_dir`'s
// run.db: the verified best from the run's summary, the per-round series from its programs and
// evaluations (capped by the verified best, so a candidate a re-check rejected does not count).
Status CollectProblemOutcome(const std::string& problem_dir, const std::string& run_id, int rounds,
                             BenchProblemRow& row);

}  // namespace ks
