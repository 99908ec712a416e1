// Internal to the engine (engine.cc, engine_state.cc): the state of one Run.
// Thread-safety: fields under `mu` are shared with proposal threads and runner callbacks;
// the archive and the best-program fields are touched by the Run thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace ks {

// A stored program and its evaluation, waiting to enter the archive.
struct EngineOutcome {
  ProgramRecord program;
  EvalResult result;
};

struct Engine::Impl {
  EngineOptions options;
  Store* store;
  Runner* runner;
  Proposer* proposer;
  Progress* progress;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  // Run thread only.
  std::unique_ptr<Archive> archive;
  int round_done = -1;       // -1: the seed step is not done
  double wall_before_s = 0;  // wall time of earlier (killed) sessions of the run
  std::string best_id;
  std::optional<double> best_speedup;
  double best_ci_hi = 0;
  std::optional<double> seed_speedup;
  int rechecks = 0;           // challengers within noise timed against the incumbent
  int rechecks_rejected = 0;  // ... that were not faster there

  // Shared; guarded by mu.
  std::mutex mu;
  std::condition_variable cv;
  int64_t next_id = 1;
  std::set<std::string> submitted_hashes;  // code hashes sent to the runner by this process
  std::vector<EngineOutcome> outcomes;     // evaluated, not yet in the archive
  int evals_pending = 0;
  int evals_done = 0;
  int proposals_in_flight = 0;
  int duplicates = 0;
  int waiting = 0;  // proposals of the current round waiting for an answer
  Status stop;      // set by a proposer's StopRunStatus: no more proposals, the run ends
  std::map<std::string, int> proposal_failures;  // unusable_reply, proposer_error, store_error
  std::map<std::string, int> eval_failures;      // by EvalStatus name

  void Log(const std::string& line);
  void UpdateProgress(int round);
  std::string NextId();  // locks mu

  // engine.cc
  Status RunRound(int round);
  void ProposeAndSubmit(ProposalContext context, int round);
  void Submit(const ProgramRecord& program);
  void WaitForEvaluations();
  Status Integrate(const EngineOutcome& outcome);
  void ConsiderBest(const ProgramRecord& program, const EvalResult& result);
  // Times `challenger` against the incumbent best, interleaved in one worker. Returns ""
  // when it is faster beyond the noise, else why it is not declared best.
  std::string Duel(const ProgramRecord& challenger);
  EvalRequest RequestFor(const ProgramRecord& program) const;
  // Earlier attempts for a proposal from `parent_id`: its lineage, then its latest children.
  std::vector<AttemptSummary> HistoryOf(const std::string& parent_id,
                                        const std::vector<ProgramRecord>& programs);

  // engine_state.cc
  Status Recover();    // restores the archive and takes up stored programs
  Status SaveState();  // after each round
  nlohmann::json Summary();
  Status WriteSummary(const nlohmann::json& summary);
};

// The store id of an archive program: migrant and seed copies are "<id>@i<island>".
std::string StoreIdOf(const std::string& archive_id);

}  // namespace ks
