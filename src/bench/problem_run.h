// One problem of a bench: an evolve run under the bench's protocol in
// RUN_DIR/problems/<level>/<stem>/ (run.json, run.db, best.py, summary.json, run.log), resumed
// when its run.db holds an unfinished run and taken as it is when the run finished; and the
// outcome read back from its run.db for the metrics.
// Thread-safety: RunBenchProblem may run for several problems at once when the shared Runner
// and LLM client are thread-safe (WorkerPool and LlmClient implementations are).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/metrics.h"
#include "bench/suite.h"
#include "eval/runner.h"
#include "llm/llm_client.h"

namespace ks {

// The protocol every problem of a bench runs under (stored in bench_config.json).
struct BenchProtocol {
  std::string backend = "cpu";     // "triton", "cuda" or "cpu" (resolved, never empty)
  std::string proposer = "tuner";  // "tuner", "llm" or "command"
  std::string model;               // recorded with LLM calls
  int rounds = 40;
  int islands = 2;
  int parallel_proposals = 4;
  int trials = 5;
  uint64_t seed = 42;
  int max_tokens = 32768;  // completion cap per LLM call (fitted to the context by the client)
};

// What all problems share: one runner (worker pool) and, for the llm and command proposers,
// one client whose in-flight bound is the bench's LLM budget.
struct BenchShared {
  Runner* runner = nullptr;
  std::shared_ptr<LlmClient> llm_client;  // null for the tuner
  std::string hardware;                   // the device, as the prompts name it
};

struct BenchProblemRow {
  ProblemOutcome outcome;
  // "finished", "skipped" (not attempted: `reason` says why), "failed" (infrastructure error:
  // `reason`), or "unfinished" (the engine stopped early, e.g. waiting for answers).
  std::string status;
  std::string reason;
  std::string problem_path;
  std::string seed_path;  // "" when the proposer translated the reference
  std::string run_dir;    // the problem's run directory ("" when skipped)
  bool reused = false;    // a finished run found on resume, not rerun
  nlohmann::json summary = nlohmann::json::object();  // the engine's summary
  int rounds_to_best = -1;  // first round whose best equals the final best; -1: none

  nlohmann::json ToJson() const;
};

// Runs (or resumes, or reuses) the problem's evolve run in `problem_dir`. Never fails: errors
// are the row's status and reason.
BenchProblemRow RunBenchProblem(const SuiteProblem& problem, const std::string& problem_dir,
                                const BenchProtocol& protocol, const BenchShared& shared);

// Fills `row` (outcome, summary, rounds_to_best) from the run `run_id` of `problem_dir`'s
// run.db: the verified best from the run's summary, the per-round series from its programs and
// evaluations (capped by the verified best, so a candidate a re-check rejected does not count).
Status CollectProblemOutcome(const std::string& problem_dir, const std::string& run_id, int rounds,
                             BenchProblemRow& row);

}  // namespace ks
