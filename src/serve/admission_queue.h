// AdmissionQueue: the bounded queue in front of a Runner that gives the reward service its
// back-pressure. At most `max_in_flight` evaluations are handed to the runner at once (its slot
// count, so the runner's own queue stays short); the rest wait here, at most `max_queue` of
// them, where a request that is gone (client disconnected, deadline passed) can still take its
// jobs back.
//
// Every job gets exactly one `done` call: its result, or infra_error "cancelled: ..." when it
// was taken back before it started, or "service is shutting down".
// Thread-safety: all methods may be called from any thread; `done` runs on a runner thread or
// on the caller's thread (cancellation, shutdown), never under the queue's lock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "eval/runner.h"

namespace ks {

// Shared by the jobs of one HTTP request; set once the request no longer wants them.
using CancelFlag = std::shared_ptr<std::atomic<bool>>;
inline CancelFlag MakeCancelFlag() { return std::make_shared<std::atomic<bool>>(false); }

struct AdmissionOptions {
  size_t max_queue = 256;    // evaluations waiting here; a batch that does not fit is refused
  // Largest batch ever admitted: max_queue + max_in_flight.
  size_t max_in_flight = 1;  // evaluations handed to the runner at once; >= 1
};

struct AdmissionStats {
  size_t queued = 0;     // waiting here
  size_t in_flight = 0;  // handed to the runner, not finished
  uint64_t cancelled = 0;  // taken back before they started
  uint64_t refused = 0;    // jobs in batches refused because the queue was full
};

class AdmissionQueue {
 public:
  struct Job {
    EvalRequest request;
    Runner::Callback done;
    CancelFlag cancel;  // may be null: never cancelled
  };

  // `runner` must outlive this queue.
  AdmissionQueue(Runner* runner, AdmissionOptions options);
  ~AdmissionQueue();  // Shutdown()
  AdmissionQueue(const AdmissionQueue&) = delete;
  AdmissionQueue& operator=(const AdmissionQueue&) = delete;

  // Queues all of `jobs` or none of them: returns false, calling no `done`, when those that
  // cannot start at once on a free slot would take the queue past max_queue (or after
  // Shutdown).
  bool TrySubmit(std::vector<Job> jobs);
  // Queues `job` ahead of the others, whatever the queue's length (a parent baseline that
  // several requests wait for).
  void SubmitUrgent(Job job);
  // Sets `flag` and takes back the queued jobs carrying it (their `done` gets a "cancelled"
  // result with `reason`). Jobs already running finish; their results go to `done` as usual.
  void Cancel(const CancelFlag& flag, const std::string& reason);

  AdmissionStats stats() const;
  const AdmissionOptions& options() const { return options_; }

  // Refuses new jobs, cancels the queued ones and waits until the running ones finished.
  // Idempotent.
  void Shutdown();

 private:
  // Hands queued jobs to the runner while there is room. Call without holding mu_.
  void Pump();

  Runner* const runner_;
  const AdmissionOptions options_;

  mutable std::mutex mu_;  // guards the fields below
  std::condition_variable idle_cv_;
  std::deque<Job> queue_;
  size_t in_flight_ = 0;
  bool stopping_ = false;
  uint64_t cancelled_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace ks
