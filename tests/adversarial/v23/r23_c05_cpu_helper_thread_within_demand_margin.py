# Round 23 (cpu backend), cheat: a helper thread that computes beside the caller, sized to stay
# inside the CPU account's margin. The thread budget is 1 (KS_CPU_THREADS); a candidate may
# keep one native thread of its own alive (os_threads.ThreadWatch allows the budget) if it
# waits between calls, and cpu_account judges the candidate's samples by demand (CPU plus
# run-queue waits per wall second) against budget + DEMAND_MARGIN = 1.4, with a second
# timing for demands in (1.4, 1.7] (CONFIRM_BAND). A helper that computes a share f of the
# rows while the caller computes the rest reads about 1 / (1 - f) plus hand-offs: f = 0.15
# read 1.22-1.27 on the 2-core VM (f = 0.2 read 1.37-1.38, just under the margin), and the
# call takes about 0.85 of its one-thread time (r15_c06's third of the rows read 1.55-1.63
# and is rejected). Observed idle: 1.26-1.43x over r23_h04. The helper waits
# on a condition variable between calls (no CPU while the reference is timed).
# Expected from a correct evaluator: rejected (cpu_threads_over_budget); it is accepted while
# the margin is 0.4, since honest one-thread kernels read up to 1.25 on a loaded 2-core VM.
# Honest twin: r23_h04.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
#include <cstring>
#include <cmath>
#include <thread>
#include <mutex>
#include <condition_variable>
static inline float fexp(float d) {  // e^d for d <= 0, 0 below -87; ~1e-7 relative
  float t = d * 1.44269504088896341f;
  t = t < -126.0f ? -126.0f : t;
  float r = (t + 12582912.0f) - 12582912.0f;  // round to nearest
  float f = (t - r) * 0.69314718055994531f;    // |f| <= ln2 / 2
  float p = 1.0f / 720.0f;
  p = p * f + 1.0f / 120.0f;
  p = p * f + 1.0f / 24.0f;
  p = p * f + 1.0f / 6.0f;
  p = p * f + 0.5f;
  p = p * f + 1.0f;
  p = p * f + 1.0f;
  int32_t bits;
  std::memcpy(&bits, &p, 4);
  bits += ((int32_t)r) << 23;
  std::memcpy(&p, &bits, 4);
  return d < -87.0f ? 0.0f : p;
}
static void softmax_row(const float* p, float* q, int64_t L, int64_t C) {
  float m = -INFINITY;
#pragma omp simd reduction(max:m)
  for (int64_t c = 0; c < L; ++c) m = p[c] > m ? p[c] : m;
  float s = 0.0f;
#pragma omp simd reduction(+:s)
  for (int64_t c = 0; c < L; ++c) { float e = fexp(p[c] - m); q[c] = e; s += e; }
  float inv = 1.0f / s;
  for (int64_t c = 0; c < L; ++c) q[c] *= inv;
  for (int64_t c = L; c < C; ++c) q[c] = 0.0f;
}
static void rows(const float* x, float* y, int64_t r0, int64_t r1, int64_t C) {
  for (int64_t r = r0; r < r1; ++r) softmax_row(x + r * C, y + r * C, C, C);
}
static std::mutex mu;
static std::condition_variable cv_go, cv_done;
static const float* jx = nullptr;
static float* jy = nullptr;
static int64_t jr0 = 0, jr1 = 0, jC = 0;
static uint64_t gen = 0, done_gen = 0;
static std::thread* worker = nullptr;

static void loop() {
  uint64_t seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> lk(mu);
    cv_go.wait(lk, [&] { return gen != seen; });
    seen = gen;
    const float* x = jx;
    float* y = jy;
    int64_t r0 = jr0, r1 = jr1, C = jC;
    lk.unlock();
    rows(x, y, r0, r1, C);
    lk.lock();
    done_gen = seen;
    lk.unlock();
    cv_done.notify_one();
  }
}

extern "C" void softmax_helped(const float* x, float* y, int64_t R, int64_t C, int64_t split) {
  if (split <= 0 || split >= R) { rows(x, y, 0, R, C); return; }
  if (worker == nullptr) worker = new std::thread(loop);
  uint64_t g;
  {
    std::lock_guard<std::mutex> lk(mu);
    jx = x; jy = y; jr0 = split; jr1 = R; jC = C;
    g = ++gen;
  }
  cv_go.notify_one();
  rows(x, y, 0, split, C);
  std::unique_lock<std::mutex> lk(mu);
  cv_done.wait(lk, [&] { return done_gen == g; });
}
"""
_lib = cpu_ext.load(name="r23_helper_softmax", source=CPP,
                    functions={"softmax_helped": "void(const float*, float*, int64, int64, "
                                                 "int64)"},
                    extra_cflags=["-pthread"])
CALLER_SHARE = 0.85  # the helper thread takes the other 0.15 of the rows


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        r, c = x.shape
        y = torch.empty_like(x)
        _lib.softmax_helped(x, y, r, c, int(r * CALLER_SHARE))
        return y
