// Runner: evaluates candidates. The engine and the CLI hold this interface; WorkerPool is
// the local implementation (subprocess workers), tests use fakes.
//
// Contract: every request submitted gets exactly one EvalResult, failures included; the
// callback runs on a runner thread. Thread-safety: all methods may be called from any thread.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/eval_result.h"

namespace ks {

struct EvalRequest {
  std::string problem_path;      // for messages and identity
  std::string problem_source;    // the file's text
  std::string candidate_path;
  std::string candidate_source;
  std::string backend = "cpu";   // "triton", "cuda" or "cpu"
  int trials = 5;                // correctness trials, fresh seed each
  std::string tolerance = "default";  // "default" (1e-2) or "strict" (1e-4)
  uint64_t seed = 42;
  bool timing = true;            // false: skip the timing stage
  // When set, the timing stage measures the candidate against this other candidate (its
  // ModelNew, e.g. the incumbent best) interleaved in the same worker, instead of against
  // the reference; the result's `vs_baseline` holds it and `speedup` stays empty.
  std::string baseline_path;
  std::string baseline_source;
  // Also time reference and candidate with a second, independent method (the worker's
  // independent.py); the figures land in stages["timing"]["independent"].
  bool independent_timing = false;
};

class Runner {
 public:
  using Callback = std::function<void(EvalResult)>;
  virtual ~Runner() = default;

  // Queues the request; `done` is called exactly once with its result.
  virtual void Submit(EvalRequest request, Callback done) = 0;
  // Blocking convenience: submits and waits.
  EvalResult Evaluate(EvalRequest request);
  // Stops accepting work, finishes what is queued, shuts workers down.
  virtual void Shutdown() = 0;
};

}  // namespace ks
