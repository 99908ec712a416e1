// GpuLease: exclusive right to time kernels on one GPU (or, in a CPU-only pool, on the
// machine). Waiters are served first come, first served.
//
// A slot takes a ticket, polls TryAcquire from its poll loop (so it keeps draining its
// worker's output while it waits), and gives the ticket back with Release whether or not it
// was granted.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>

namespace ks {

class GpuLease {
 public:
  using Ticket = uint64_t;

  // Joins the queue of waiters.
  Ticket Enqueue();
  // True if `ticket` holds the lease: it already did, or the lease was free and `ticket` was
  // the oldest waiter, in which case it now does.
  bool TryAcquire(Ticket ticket);
  // Gives up the lease if `ticket` holds it, or leaves the queue otherwise. No-op for a ticket
  // that is neither (so releasing twice is harmless).
  void Release(Ticket ticket);
  // True while some ticket holds the lease.
  bool held() const;

 private:
  mutable std::mutex mu_;
  Ticket next_ = 1;
  Ticket holder_ = 0;  // 0: free
  std::deque<Ticket> waiters_;
};

}  // namespace ks
