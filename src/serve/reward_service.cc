#include "serve/reward_service.h"

#include <fmt/format.h>

#include <condition_variable>
#include <memory>
#include <mutex>

#include "core/sha256.h"
#include "serve/child_extraction.h"

namespace ks {
namespace {

using nlohmann::json;

// Results of one call's evaluations, filled by runner callbacks, awaited by the caller.
class Pending {
 public:
  explicit Pending(size_t n) : results_(n) {}

  void Set(size_t i, EvalResult r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      results_[i] = std::move(r);
      ++finished_;
    }
    cv_.notify_all();
  }
  void Expect(size_t n) { expected_ += n; }

  CallOutcome Wait(const WaitControl& w) {
    std::unique_lock<std::mutex> lock(mu_);
    while (finished_ < expected_) {
      if (w.stopping != nullptr && w.stopping->load()) return CallOutcome::kShuttingDown;
      if (std::chrono::steady_clock::now() >= w.deadline) return CallOutcome::kDeadline;
      if (w.client_gone) {
        lock.unlock();
        bool gone = w.client_gone();
        lock.lock();
        if (gone) return CallOutcome::kClientGone;
      }
      cv_.wait_until(lock, std::min(w.deadline, std::chrono::steady_clock::now() +
                                                    std::chrono::milliseconds(100)));
    }
    return CallOutcome::kDone;
  }
  EvalResult Take(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(*results_[i]);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::optional<EvalResult>> results_;
  size_t finished_ = 0;
  size_t expected_ = 0;  // set before any callback can run
};

const char* Reason(CallOutcome o) {
  switch (o) {
    case CallOutcome::kDeadline:
      return "the request's deadline passed";
    case CallOutcome::kClientGone:
      return "the client disconnected";
    case CallOutcome::kShuttingDown:
      return "service is shutting down";
    default:
      return "the request ended";
  }
}

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Waits for `pending`; a wait that ends otherwise takes this call's queued work back.
CallOutcome WaitOrCancel(Pending& pending, const WaitControl& wait, AdmissionQueue* queue,
                         const CancelFlag& cancel) {
  CallOutcome o = pending.Wait(wait);
  if (o != CallOutcome::kDone) queue->Cancel(cancel, Reason(o));
  return o;
}

}  // namespace

json RewardItemResult::ToJson(bool full_eval) const {
  json j = {{"reward", reward},
            {"status", status},
            {"message", message},
            {"edit_kind", edit_kind},
            {"speedup", Optional(speedup)},
            {"parent_speedup", Optional(parent_speedup)},
            {"parent_baseline", parent_baseline},
            {"parent_status", parent_status},
            {"speedup_vs_parent", Optional(speedup_vs_parent)},
            {"speedup_vs_parent_ci95",
             speedup_vs_parent_ci95
                 ? json::array({speedup_vs_parent_ci95->first, speedup_vs_parent_ci95->second})
                 : json(nullptr)}};
  if (status == "parse_error") j["parse_error"] = message;
  if (eval) {
    if (full_eval) {
      j["eval"] = eval->ToJson();
    } else {
      json findings = json::array();
      for (const Finding& f : eval->findings) {
        if (f.severity != "info") findings.push_back(f.kind + ": " + f.detail);
      }
      j["findings"] = findings;
      if (eval->vs_baseline) {  // timed against the parent, interleaved
        j["cand_us"] = Optional(eval->vs_baseline->cand_us);
        j["parent_us"] = Optional(eval->vs_baseline->baseline_us);
      } else {
        j["cand_us"] = Optional(eval->cand_us);
        j["ref_us"] = Optional(eval->ref_us);
      }
      j["duration_s"] = eval->duration_s;
    }
  }
  return j;
}

RewardService::RewardService(AdmissionQueue* queue, ParentBaselines* baselines,
                             RewardServiceOptions options)
    : queue_(queue), baselines_(baselines), options_(std::move(options)) {}

CallOutcome RewardService::Evaluate(EvalRequest request, const WaitControl& wait,
                                    EvalResult* out) {
  auto pending = std::make_shared<Pending>(1);
  pending->Expect(1);
  CancelFlag cancel = MakeCancelFlag();
  std::vector<AdmissionQueue::Job> jobs(1);
  jobs[0].request = std::move(request);
  jobs[0].done = [pending](EvalResult r) { pending->Set(0, std::move(r)); };
  jobs[0].cancel = cancel;
  if (!queue_->TrySubmit(std::move(jobs))) return CallOutcome::kBusy;
  CallOutcome o = WaitOrCancel(*pending, wait, queue_, cancel);
  if (o != CallOutcome::kDone) return o;
  *out = pending->Take(0);
  return o;
}

EvalRequest RewardService::RequestFor(const GroundTruth& truth, std::string candidate_source,
                                      std::string candidate_path) const {
  EvalRequest r;
  r.problem_path = truth.problem_path;
  r.problem_source = truth.reference_code;
  r.candidate_path = std::move(candidate_path);
  r.candidate_source = std::move(candidate_source);
  r.backend = truth.backend.empty() ? options_.default_backend : truth.backend;
  r.trials = options_.trials;
  r.tolerance = options_.tolerance;
  r.seed = options_.seed;
  r.timing = true;
  return r;
}

CallOutcome RewardService::Submit(std::vector<AdmissionQueue::Job> jobs) {
  if (jobs.empty()) return CallOutcome::kDone;
  const AdmissionOptions& room = queue_->options();
  if (jobs.size() > room.max_queue + room.max_in_flight) return CallOutcome::kTooLarge;
  if (!queue_->TrySubmit(std::move(jobs))) return CallOutcome::kBusy;
  return CallOutcome::kDone;
}

CallOutcome RewardService::Score(const std::vector<RewardItem>& items, const WaitControl& wait,
                                 std::vector<RewardItemResult>* out) {
  const size_t n = items.size();
  std::vector<RewardItemResult> results(n);
  // Slots 0..n-1: children; n..2n-1: parents. A revision's child is timed against its
  // parent, interleaved in one worker; the parent's own evaluation (cached by its hash) says
  // whether it is a baseline to measure against.
  auto pending = std::make_shared<Pending>(2 * n);
  CancelFlag cancel = MakeCancelFlag();
  std::vector<AdmissionQueue::Job> jobs;
  std::vector<size_t> evaluated;
  std::vector<std::string> child_code(n), child_path(n);
  for (size_t i = 0; i < n; ++i) {
    const GroundTruth& truth = items[i].truth;
    Result<ChildProgram> child = ExtractChild(items[i].completion, truth.parent_code);
    if (!child.ok()) {
      results[i].status = "parse_error";
      results[i].message = child.status().message();
      continue;
    }
    results[i].edit_kind = child->edit_kind;
    child_path[i] =
        fmt::format("{}#child-{}", truth.problem_path, Sha256Hex(child->code).substr(0, 12));
    child_code[i] = std::move(child->code);
    AdmissionQueue::Job job;
    job.request = RequestFor(truth, child_code[i], child_path[i]);
    if (!truth.parent_code.empty()) {
      job.request.baseline_path = truth.problem_path + "#parent";
      job.request.baseline_source = truth.parent_code;
    }
    job.done = [pending, i](EvalResult r) { pending->Set(i, std::move(r)); };
    job.cancel = cancel;
    jobs.push_back(std::move(job));
    evaluated.push_back(i);
  }
  pending->Expect(2 * evaluated.size());
  if (CallOutcome o = Submit(std::move(jobs)); o != CallOutcome::kDone) return o;
  for (size_t i : evaluated) {
    const GroundTruth& truth = items[i].truth;
    if (truth.parent_code.empty()) {  // translation: the baseline is the reference (speedup 1)
      EvalResult reference = EvalResult::Failure(EvalStatus::kOk, "");
      reference.speedup = 1.0;
      pending->Set(n + i, std::move(reference));
      continue;
    }
    baselines_->Measure(RequestFor(truth, truth.parent_code, truth.problem_path + "#parent"),
                        [pending, slot = n + i](const EvalResult& r) { pending->Set(slot, r); });
  }
  CallOutcome o = WaitOrCancel(*pending, wait, queue_, cancel);
  if (o != CallOutcome::kDone) return o;
  std::vector<EvalResult> child(n), parent(n);
  for (size_t i : evaluated) {
    child[i] = pending->Take(i);
    parent[i] = pending->Take(n + i);
  }
  // A parent that failed here is no baseline: its children are timed again, against the
  // reference.
  std::vector<size_t> again;
  for (size_t i : evaluated) {
    if (!items[i].truth.parent_code.empty() && parent[i].status != EvalStatus::kOk) {
      again.push_back(i);
    }
  }
  if (!again.empty()) {
    auto second = std::make_shared<Pending>(n);
    second->Expect(again.size());
    std::vector<AdmissionQueue::Job> retimed;
    for (size_t i : again) {
      AdmissionQueue::Job job;
      job.request = RequestFor(items[i].truth, child_code[i], child_path[i]);
      job.done = [second, i](EvalResult r) { second->Set(i, std::move(r)); };
      job.cancel = cancel;
      retimed.push_back(std::move(job));
    }
    if (CallOutcome s = Submit(std::move(retimed)); s != CallOutcome::kDone) return s;
    o = WaitOrCancel(*second, wait, queue_, cancel);
    if (o != CallOutcome::kDone) return o;
    for (size_t i : again) child[i] = second->Take(i);
  }
  for (size_t i : evaluated) {
    results[i] = Reward(std::move(results[i]), items[i].truth, child[i], parent[i]);
  }
  *out = std::move(results);
  return o;
}

RewardItemResult RewardService::Reward(RewardItemResult r, const GroundTruth& truth,
                                       const EvalResult& child, const EvalResult& parent) const {
  r.status = EvalStatusName(child.status);
  r.message = child.message;
  r.speedup = child.speedup;
  r.parent_status = EvalStatusName(parent.status);
  r.eval = child;
  const bool interleaved = child.vs_baseline.has_value();
  if (truth.parent_code.empty()) {  // a translation is measured against the reference
    r.parent_speedup = 1.0;
    r.parent_baseline = "reference";
    r.parent_status = "";
  } else if (parent.status == EvalStatus::kOk && parent.speedup && *parent.speedup > 0) {
    r.parent_speedup = parent.speedup;
    r.parent_baseline = interleaved ? "interleaved" : "measured";
  } else if (truth.parent_speedup && *truth.parent_speedup > 0) {
    r.parent_speedup = truth.parent_speedup;
    r.parent_baseline = "ground_truth";
  } else {
    r.parent_speedup = 1.0;
    r.parent_baseline = "reference";
  }
  if (child.status != EvalStatus::kOk) return r;  // reward 0
  if (interleaved && r.parent_baseline == "interleaved") {
    // child and parent timed in one worker, interleaved: the ratio is measured, with its CI;
    // the speedup over the reference is derived from the parent's
    const BaselineComparison& vs = *child.vs_baseline;
    if (vs.speedup <= 0) {
      r.message = "the evaluation measured no speedup over the parent, so no reward";
      return r;
    }
    r.speedup_vs_parent = vs.speedup;
    if (vs.speedup_ci_lo && vs.speedup_ci_hi) {
      r.speedup_vs_parent_ci95 = std::make_pair(*vs.speedup_ci_lo, *vs.speedup_ci_hi);
    }
    r.speedup = vs.speedup * *r.parent_speedup;
  } else {
    if (!child.speedup) {
      r.message = "the evaluation measured no speedup (timing did not run), so no reward";
      return r;
    }
    r.speedup_vs_parent = *child.speedup / *r.parent_speedup;
  }
  r.reward = RewardFromRatio(options_.reward, *r.speedup_vs_parent);
  return r;
}

}  // namespace ks
