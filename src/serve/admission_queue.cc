#include "serve/admission_queue.h"

#include <algorithm>
#include <utility>

namespace ks {
namespace {

void Finish(AdmissionQueue::Job& job, const std::string& message) {
  EvalResult r = EvalResult::Failure(EvalStatus::kInfraError, message);
  r.backend = job.request.backend;
  r.problem.path = job.request.problem_path;
  r.candidate.path = job.request.candidate_path;
  job.done(std::move(r));
}

AdmissionOptions WithRunnerRoom(AdmissionOptions o) {
  o.max_in_flight = std::max<size_t>(o.max_in_flight, 1);
  return o;
}

}  // namespace

AdmissionQueue::AdmissionQueue(Runner* runner, AdmissionOptions options)
    : runner_(runner), options_(WithRunnerRoom(options)) {}

AdmissionQueue::~AdmissionQueue() { Shutdown(); }

bool AdmissionQueue::TrySubmit(std::vector<Job> jobs) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Jobs that can start at once take free slots; the rest must fit in the queue.
    const size_t free_slots = options_.max_in_flight - std::min(in_flight_, options_.max_in_flight);
    if (stopping_ || queue_.size() + jobs.size() > options_.max_queue + free_slots) {
      refused_ += jobs.size();
      return false;
    }
    for (Job& job : jobs) queue_.push_back(std::move(job));
  }
  Pump();
  return true;
}

void AdmissionQueue::SubmitUrgent(Job job) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!stopping_) {
      queue_.push_front(std::move(job));
      lock.unlock();
      Pump();
      return;
    }
  }
  Finish(job, "service is shutting down");
}

void AdmissionQueue::Cancel(const CancelFlag& flag, const std::string& reason) {
  if (flag == nullptr) return;
  flag->store(true);
  std::vector<Job> taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto keep = std::stable_partition(queue_.begin(), queue_.end(),
                                      [&](const Job& j) { return j.cancel != flag; });
    for (auto it = keep; it != queue_.end(); ++it) taken.push_back(std::move(*it));
    queue_.erase(keep, queue_.end());
    cancelled_ += taken.size();
  }
  for (Job& job : taken) Finish(job, "cancelled: " + reason);
}

void AdmissionQueue::Pump() {
  std::vector<Job> start;
  std::vector<Job> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (in_flight_ < options_.max_in_flight && !queue_.empty()) {
      Job job = std::move(queue_.front());
      queue_.pop_front();
      if (job.cancel != nullptr && job.cancel->load()) {
        ++cancelled_;
        dropped.push_back(std::move(job));
        continue;
      }
      ++in_flight_;
      start.push_back(std::move(job));
    }
  }
  for (Job& job : dropped) Finish(job, "cancelled: the request is gone");
  for (Job& job : start) {
    runner_->Submit(std::move(job.request), [this, done = std::move(job.done)](EvalResult r) {
      done(std::move(r));
      {
        std::lock_guard<std::mutex> lock(mu_);
        --in_flight_;
      }
      idle_cv_.notify_all();
      Pump();
    });
  }
}

AdmissionStats AdmissionQueue::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  AdmissionStats s;
  s.queued = queue_.size();
  s.in_flight = in_flight_;
  s.cancelled = cancelled_;
  s.refused = refused_;
  return s;
}

void AdmissionQueue::Shutdown() {
  std::deque<Job> taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    taken.swap(queue_);
    cancelled_ += taken.size();
  }
  for (Job& job : taken) Finish(job, "service is shutting down");
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return in_flight_ == 0; });
}

}  // namespace ks
