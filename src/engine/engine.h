// Engine: the evolve loop. A seed program (evaluated first), then rounds: each
// island samples parents and inspirations from the Archive, the Proposer writes children
// (up to `parallel_proposals` at once), children already evaluated (same normalized code) reuse
// their stored result, the others go to the Runner (its slots bound the evaluations in flight),
// every program and its one evaluation are stored, and the archive ranks them by fitness.
// After each round the islands end a generation (ring migration) and the engine's state is
// stored, so a killed run resumes with nothing completed lost and nothing evaluated twice.
//
//   Engine engine(options, store, runner, proposer, progress);
//   Result<nlohmann::json> summary = engine.Run();   // also writes best.py and summary.json
//
// Thread-safety: Run is called once, from one thread; it uses its own threads inside.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "archive/archive.h"
#include "core/status.h"
#include "engine/progress.h"
#include "engine/proposer.h"
#include "eval/runner.h"
#include "store/store.h"
#include "usage/llm_usage.h"

namespace ks {

struct EngineOptions {
  std::string run_id;        // an existing run of the store; required
  std::string problem_path;  // the problem file, and its text
  std::string problem_source;
  std::string seed_path;  // the seed kernel; empty: the proposer translates the reference
  std::string seed_source;
  std::string backend = "cpu";
  std::string hardware;            // the evaluating device, shown in prompts; empty: generic
  int history = 6;                 // earlier attempts shown per proposal (lineage + siblings)
  int rounds = 40;                 // rounds after the seed
  int parallel_proposals = 4;      // proposals in flight at once, >= 1
  int proposals_per_round = 0;     // children per round; 0: max(islands, parallel_proposals)
  int inspirations = 3;            // inspirations per proposal
  int trials = 5;                  // correctness trials per evaluation
  uint64_t seed = 42;              // evaluation seed
  double compiled_fitness = 0.01;  // fitness of a compiled but wrong (or hacked) candidate
  int duplicate_retries = 4;       // extra asks of a cheap proposer after a duplicate
  ArchiveOptions archive;
  LlmPrices prices;     // the summary's LLM cost; none given: no cost figure
  std::string run_dir;  // where best.py and summary.json go; empty: not written
};

// Fitness: 0 unless compiled; `compiled_fitness` for compiled but wrong or hacked;
// the measured speedup (1 when untimed) for a correct candidate.
double Fitness(const EvalResult& result, double compiled_fitness);

class Engine {
 public:
  // `store`, `runner` and `proposer` must outlive the engine; `progress` may be null.
  Engine(EngineOptions options, Store* store, Runner* runner, Proposer* proposer,
         Progress* progress);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs (or resumes: whatever the store already holds for the run is taken up) until
  // `rounds` rounds are done. Returns the summary (also stored and written to summary.json).
  // When the proposer is waiting for answers (WaitingStatus), the round's answered
  // candidates are evaluated and stored, the run stops early and the summary's
  // `waiting_answers` says how many answers are missing; a resumed run redoes that round.
  // Errors are infrastructure failures (store, archive); candidate failures are data.
  Result<nlohmann::json> Run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ks
