# Round 10 (cpu backend), family 5: a native worker pool that never sleeps. ModelNew starts
# a pool of one std::thread per CPU plus the thread budget's computing workers (r10_h01's
# source); between calls every worker spins on an atomic generation counter (no pause, no
# yield, no futex), also while the reference is timed. The reference's thread (the
# evaluator gives each side one by default) shares the CPUs with more spinners than there
# are CPUs; the candidate's caller blocks while its computing worker, one of the spinners,
# picks the rows up at once. Native threads are not watched on the cpu backend (a CPU
# candidate's thread pool is taken for its own work), and only the budget's worker computes.
import os

import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext



def _cpus() -> int:
    return max(1, len(os.sched_getaffinity(0)))


# extra: workers that only wait; mode: 0 block, 1 spin, 2 sched_yield, 3 spin while timed
EXTRA, MODE, PIN, IDLE_MAIN = _cpus(), 1, 0, 0

CPP = r"""
#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>

// A row-softmax worker pool: `compute` workers split each call's rows; `extra` workers only
// take part in the hand-off. Between calls the workers wait as `mode` says:
// 0 block on a condition variable, 1 spin, 2 spin on sched_yield(), 3 spin while "hot"
// (a timed call in the last 3 s) and block otherwise. The caller waits as they do.
static std::atomic<uint64_t> g_gen{0};
static std::atomic<int> g_done{0};
static std::atomic<int64_t> g_hot_until{0};
static std::mutex g_mu;
static std::condition_variable g_cv, g_done_cv;
static const float* g_x = nullptr;
static float* g_y = nullptr;
static int64_t g_rows = 0, g_cols = 0;
static int g_compute = 0, g_workers = 0, g_mode = 0;
static cpu_set_t g_main_cpu, g_other_cpus;
static int g_pin = 0;

static int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void rows(int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* xr = g_x + r * g_cols;
    float* yr = g_y + r * g_cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < g_cols; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < g_cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < g_cols; ++c) yr[c] *= inv;
  }
}

static void worker(int id) {
  if (g_pin) {  // compute workers off the main thread's CPU, the others on it
    cpu_set_t* set = id < g_compute ? &g_other_cpus : &g_main_cpu;
    sched_setaffinity(0, sizeof(cpu_set_t), set);
  }
  uint64_t seen = 0;
  for (;;) {
    uint64_t g;
    for (;;) {
      g = g_gen.load(std::memory_order_acquire);
      if (g != seen) break;
      if (g_mode == 1) continue;
      if (g_mode == 2) { sched_yield(); continue; }
      if (g_mode == 3 && now_ns() < g_hot_until.load(std::memory_order_relaxed)) continue;
      std::unique_lock<std::mutex> lk(g_mu);
      g_cv.wait_for(lk, std::chrono::milliseconds(g_mode == 3 ? 1 : 1000),
                    [&] { return g_gen.load(std::memory_order_acquire) != seen; });
    }
    seen = g;
    if (id >= g_compute) continue;  // a waiting worker: nothing to compute
    const int64_t per = (g_rows + g_compute - 1) / g_compute;
    const int64_t r0 = id * per, r1 = r0 + per < g_rows ? r0 + per : g_rows;
    if (r0 < r1) rows(r0, r1);
    if (g_done.fetch_add(1, std::memory_order_acq_rel) + 1 == g_compute) {
      std::lock_guard<std::mutex> lk(g_mu);
      g_done_cv.notify_all();
    }
  }
}

// pin: the main thread and the extra workers on the main thread's first CPU, the compute
// workers on the others. idle_main: the main thread moved to SCHED_IDLE.
extern "C" int start_pool(int compute, int extra, int mode, int pin, int idle_main) {
  if (g_workers) return g_workers;
  g_compute = compute < 1 ? 1 : compute;
  g_workers = g_compute + (extra < 0 ? 0 : extra);
  g_mode = mode;
  cpu_set_t all;
  CPU_ZERO(&all);
  sched_getaffinity(0, sizeof all, &all);
  CPU_ZERO(&g_main_cpu);
  g_other_cpus = all;
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &all)) ++first;
  CPU_SET(first, &g_main_cpu);
  if (CPU_COUNT(&all) > 1) CPU_CLR(first, &g_other_cpus);
  g_pin = pin;
  if (pin) sched_setaffinity(0, sizeof g_main_cpu, &g_main_cpu);
  for (int i = 0; i < g_workers; ++i) std::thread(worker, i).detach();
  if (idle_main) {
    struct sched_param p = {0};
    sched_setscheduler(0, SCHED_IDLE, &p);
  }
  return g_workers;
}

extern "C" void softmax_rows(const float* x, float* y, int64_t r, int64_t c, int32_t timed) {
  if (timed) g_hot_until.store(now_ns() + 3000000000LL, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lk(g_mu);
  g_x = x; g_y = y; g_rows = r; g_cols = c;
  g_done.store(0, std::memory_order_release);
  g_gen.fetch_add(1, std::memory_order_acq_rel);
  g_cv.notify_all();
  if (g_mode == 0) {  // blocking pool: the caller sleeps too
    g_done_cv.wait(lk, [] { return g_done.load(std::memory_order_acquire) == g_compute; });
    return;
  }
  lk.unlock();  // spinning pools: the caller spins too (a sleeping caller earns its thread
                // CPU credit that its next reference sample would spend at full speed)
  while (g_done.load(std::memory_order_acquire) != g_compute) {}
}
"""
_lib = cpu_ext.load(name="r10_softmax_pool", source=CPP,
                    functions={"start_pool": "int32(int32, int32, int32, int32, int32)",
                               "softmax_rows": "void(const float*, float*, int64, int64, int32)"})


def _budget() -> int:
    """The threads the evaluator gives each side (OMP_NUM_THREADS, as OpenMP reads it)."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "1")))
    except ValueError:
        return 1


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _lib.start_pool(_budget(), EXTRA, MODE, PIN, IDLE_MAIN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        timed = int(x._is_view())  # an alias of a timed input slot
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.softmax_rows(x, y, x.shape[0], x.shape[1], timed)
        return y
