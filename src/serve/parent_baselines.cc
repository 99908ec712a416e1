#include "serve/parent_baselines.h"

#include <utility>

#include "core/sha256.h"

namespace ks {
namespace {

bool Cacheable(EvalStatus s) {
  return s != EvalStatus::kTimeout && s != EvalStatus::kCrash && s != EvalStatus::kInfraError;
}

std::string KeyOf(const EvalRequest& r) {
  std::string material = r.backend;
  for (const std::string* part : {&r.problem_source, &r.candidate_source, &r.tolerance}) {
    material += '\0';
    material += *part;
  }
  material += '\0' + std::to_string(r.trials) + '\0' + std::to_string(r.seed);
  return Sha256Hex(material);
}

}  // namespace

ParentBaselines::ParentBaselines(AdmissionQueue* queue, size_t capacity)
    : queue_(queue), capacity_(capacity > 0 ? capacity : 1) {}

void ParentBaselines::Measure(const EvalRequest& parent, Done done) {
  std::string key = KeyOf(parent);
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (!it->second.finished) {
        ++stats_.joined;
        it->second.waiters.push_back(std::move(done));
        return;
      }
      ++stats_.hits;
      EvalResult cached = it->second.result;
      lock.unlock();
      done(cached);
      return;
    }
    ++stats_.measured;
    entries_[key].waiters.push_back(std::move(done));
  }
  AdmissionQueue::Job job;
  job.request = parent;
  job.done = [this, key](EvalResult r) { Finished(key, std::move(r)); };
  queue_->SubmitUrgent(std::move(job));
}

void ParentBaselines::Finished(const std::string& key, EvalResult result) {
  std::vector<Done> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    waiters = std::move(it->second.waiters);
    if (!Cacheable(result.status)) {
      entries_.erase(it);
    } else {
      it->second.finished = true;
      it->second.result = result;
      order_.push_back(key);
      while (order_.size() > capacity_) {
        entries_.erase(order_.front());
        order_.pop_front();
      }
    }
  }
  for (Done& done : waiters) done(result);
}

BaselineStats ParentBaselines::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  BaselineStats s = stats_;
  s.cached = order_.size();
  return s;
}

}  // namespace ks
