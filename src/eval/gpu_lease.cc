#include "eval/gpu_lease.h"

#include <algorithm>

namespace ks {

GpuLease::Ticket GpuLease::Enqueue() {
  std::lock_guard<std::mutex> lock(mu_);
  Ticket t = next_++;
  waiters_.push_back(t);
  return t;
}

bool GpuLease::TryAcquire(Ticket ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  if (holder_ == ticket) return true;
  if (holder_ != 0 || waiters_.empty() || waiters_.front() != ticket) return false;
  waiters_.pop_front();
  holder_ = ticket;
  return true;
}

void GpuLease::Release(Ticket ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  if (holder_ == ticket) {
    holder_ = 0;
    return;
  }
  auto it = std::find(waiters_.begin(), waiters_.end(), ticket);
  if (it != waiters_.end()) waiters_.erase(it);
}

bool GpuLease::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return holder_ != 0;
}

}  // namespace ks
