// ParentBaselines: the parent program's own evaluation, measured in this service so that the
// reward compares child and parent on the same machine, evaluated once per distinct parent and
// cached by the sha256 of (backend, reference, parent code, trials, tolerance). Requests that
// need a parent whose evaluation is already running join it instead of starting another.
//
// This is the one place that decides how the parent is measured; a later switch to timing the
// child directly against the parent (an EvalRequest baseline) changes only this class.
// Verdicts are cached (ok, incorrect, compile_error, ...); timeout, crash and infra_error are
// not, so the next request measures again.
// Thread-safety: all methods may be called from any thread; `done` runs on a runner thread or
// the caller's thread (cache hit), never under the cache's lock.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "eval/eval_result.h"
#include "eval/runner.h"
#include "serve/admission_queue.h"

namespace ks {

struct BaselineStats {
  uint64_t hits = 0;     // answered from the cache
  uint64_t joined = 0;   // joined an evaluation already running
  uint64_t measured = 0;  // evaluations started
  size_t cached = 0;
};

class ParentBaselines {
 public:
  using Done = std::function<void(const EvalResult&)>;

  // `queue` must outlive this object. At most `capacity` results are kept (oldest dropped).
  explicit ParentBaselines(AdmissionQueue* queue, size_t capacity = 4096);

  // Calls `done` with the evaluation of `parent` (candidate_source = the parent's code):
  // cached, joined, or measured now ahead of the queue.
  void Measure(const EvalRequest& parent, Done done);

  BaselineStats stats() const;

 private:
  struct Entry {
    bool finished = false;
    EvalResult result;
    std::vector<Done> waiters;
  };
  void Finished(const std::string& key, EvalResult result);

  AdmissionQueue* const queue_;
  const size_t capacity_;
  mutable std::mutex mu_;  // guards the fields below
  std::map<std::string, Entry> entries_;
  std::deque<std::string> order_;  // finished keys, oldest first
  BaselineStats stats_;
};

}  // namespace ks
