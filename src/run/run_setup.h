// The one set-up of an evolve run, used by `evolve` for its problem and by `bench` for each
// problem of a suite: the run directory (run.json, run.db), the stored run, the seed checked
// against the proposer, the proposer (prompts with the device, the dead-endpoint guard), the
// engine options from RunOptions, and the run's status after the engine stops.
//
//   Result<SourceFile> seed = LoadSeedFor(options);
//   Result<OpenedRun> run = OpenRun(options, target);
//   Result<RunOutcome> out = RunEvolution(options, spec, target, *run, shared, &progress);
//
// Thread-safety: functions; several runs may go at once when the shared Runner and LLM client
// are thread-safe (WorkerPool and the LLM clients are).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "engine/progress.h"
#include "engine/proposer_factory.h"
#include "eval/runner.h"
#include "llm/llm_client.h"
#include "run/run_options.h"
#include "store/store.h"
#include "task/task.h"

namespace ks {

// What runs started together share.
struct RunShared {
  Runner* runner = nullptr;  // the evaluation workers
  std::string hardware;      // the device the worker reports, as prompts name it
  // Proposers llm and command: one client for every run (its in-flight bound and its
  // dead-endpoint guard span them all); null: each run makes its own from its spec.
  std::shared_ptr<LlmClient> llm_client;
};

// The problem a run evolves and where.
struct RunTarget {
  // A resumed run uses the problem stored in its run.db; this file (empty: the stored path) is
  // then only compared with it, or read for a run made before sources were stored.
  SourceFile problem;
  // empty source: the proposer translates the reference first. Unused on resume: the run goes
  // on with the seed stored in its run.db (or options.seed_kernel where none was stored).
  SourceFile seed;
  std::string run_dir;
  std::string run_id;
  bool resume = false;  // continue the run `run_id` of run_dir/run.db; else start it
};

struct OpenedRun {
  std::unique_ptr<Store> store;  // run_dir/run.db
  RunRecord record;              // as stored before this session (resume) or just created
  SourceFile problem;            // the problem the run evolves (the stored one on resume)
  SourceFile seed;               // the seed it evolves from (the stored one on resume)
  std::string warning;           // non-empty: the problem file differs from the stored one
};

struct RunOutcome {
  nlohmann::json summary;   // the engine's summary (also in summary.json and run.db)
  int waiting_answers = 0;  // answers the files proposer waits for (the run is kWaiting)
  bool finished = false;    // every round ran (the run is kFinished)
};

// The seed kernel of `options.seed_kernel` (an empty SourceFile when none is named), checked
// for the proposer: the tuner needs one with tunable constants. InvalidArgument says what to
// give instead.
Result<SourceFile> LoadSeedFor(const RunOptions& options);

// Creates the run directory and opens its run.db. A new run (target.resume false) is refused
// where run.db exists; it writes run.json ({run_id, config}) and stores the run with its
// problem's source. A resumed run goes on with the problem stored in run.db (ProblemOfRun:
// `warning` is set when target.problem's file differs) and with the seed stored there (its
// file need not exist any more; LoadSeedFor(options) where none was stored). InvalidArgument
// says what to do.
Result<OpenedRun> OpenRun(const RunOptions& options, const RunTarget& target);

// Builds the proposer of `spec` (with shared.llm_client where given), runs the engine with the
// options' search, evaluation and prompt settings, and stores the run's status: kFinished when
// every round ran, kWaiting when answers are missing, kFailed on an error, which is returned
// (InvalidArgument: a problem or set-up the run cannot use).
Result<RunOutcome> RunEvolution(const RunOptions& options, ProposerSpec spec,
                                const RunTarget& target, OpenedRun& run, const RunShared& shared,
                                Progress* progress);

}  // namespace ks
