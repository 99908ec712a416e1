#include "core/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace ks {

Status ParallelFor(size_t n, int jobs, const std::function<Status(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first;
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      Status s = fn(i);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first.ok()) first = s;
        next = n;
      }
    }
  };
  std::vector<std::thread> threads;
  size_t count = std::min<size_t>(static_cast<size_t>(std::max(1, jobs)), n);
  for (size_t t = 0; t < count; ++t) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  return first;
}

}  // namespace ks
