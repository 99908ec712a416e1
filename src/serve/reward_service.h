// RewardService: what the HTTP endpoints do, without HTTP. Evaluates candidates through the
// admission queue and turns completions into rewards: extract the child (child_extraction.h),
// evaluate it, measure its parent here (parent_baselines.h), reward the speedup over the
// parent (reward_function.h).
//
// A call waits for its evaluations until they finish, its deadline passes, its client goes
// away or the service stops; in the last three cases its queued evaluations are taken back and
// the ones already running finish unobserved.
// Thread-safety: all methods may be called from any thread at once.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/eval_result.h"
#include "eval/runner.h"
#include "serve/admission_queue.h"
#include "serve/ground_truth.h"
#include "serve/parent_baselines.h"
#include "serve/reward_function.h"

namespace ks {

struct RewardServiceOptions {
  std::string default_backend = "cpu";  // for ground truths and requests that name none
  int trials = 5;                       // correctness trials of every evaluation
  std::string tolerance = "default";
  uint64_t seed = 42;
  RewardOptions reward;
};

// How a call ended.
enum class CallOutcome {
  kDone,          // every evaluation finished
  kBusy,          // refused: the queue cannot take the call's evaluations (HTTP 429)
  kTooLarge,      // refused: more evaluations than the whole queue holds (HTTP 413)
  kDeadline,      // the deadline passed first (HTTP 504)
  kClientGone,    // the client disconnected
  kShuttingDown,  // the service is stopping (HTTP 503)
};

// What a call may wait for.
struct WaitControl {
  std::chrono::steady_clock::time_point deadline;
  std::function<bool()> client_gone;          // may be empty
  const std::atomic<bool>* stopping = nullptr;  // may be null
};

struct RewardItem {
  std::string completion;  // the model's reply (response only, no prompt)
  GroundTruth truth;
};

struct RewardItemResult {
  double reward = 0;
  // The child's EvalResult status, or "parse_error" when no program could be extracted.
  std::string status;
  std::string message;      // why, in one line (the parse error, the evaluation's message)
  std::string edit_kind;    // how the completion edited the parent; empty on parse_error
  // Child vs the reference: measured, or (interleaved) the child-vs-parent ratio times the
  // parent's speedup measured here.
  std::optional<double> speedup;
  std::optional<double> parent_speedup;  // the parent's speedup over the reference used
  // "interleaved" (child timed against the parent in one worker), "measured" (the parent's
  // and the child's speedups over the reference, each measured here), "ground_truth" (the
  // parent failed here: the exported figure) or "reference" (a translation, or no figure)
  std::string parent_baseline;
  std::string parent_status;  // the parent's EvalResult status here
  std::optional<double> speedup_vs_parent;
  std::optional<std::pair<double, double>> speedup_vs_parent_ci95;  // interleaved only
  std::optional<EvalResult> eval;  // the child's full result (kept when asked for)

  nlohmann::json ToJson(bool full_eval) const;
};

class RewardService {
 public:
  // `queue` and `baselines` must outlive the service.
  RewardService(AdmissionQueue* queue, ParentBaselines* baselines, RewardServiceOptions options);

  const RewardServiceOptions& options() const { return options_; }

  // Evaluates one request (its backend, trials, tolerance, seed as given).
  CallOutcome Evaluate(EvalRequest request, const WaitControl& wait, EvalResult* out);

  // Scores a batch; on kDone `out` holds one result per item, in order.
  CallOutcome Score(const std::vector<RewardItem>& items, const WaitControl& wait,
                    std::vector<RewardItemResult>* out);

 private:
  // Queues `jobs` atomically: kDone, kTooLarge (more than the queue could ever hold) or kBusy.
  CallOutcome Submit(std::vector<AdmissionQueue::Job> jobs);
  EvalRequest RequestFor(const GroundTruth& truth, std::string candidate_source,
                         std::string candidate_path) const;
  RewardItemResult Reward(RewardItemResult r, const GroundTruth& truth, const EvalResult& child,
                          const EvalResult& parent) const;

  AdmissionQueue* const queue_;
  ParentBaselines* const baselines_;
  const RewardServiceOptions options_;
};

}  // namespace ks
