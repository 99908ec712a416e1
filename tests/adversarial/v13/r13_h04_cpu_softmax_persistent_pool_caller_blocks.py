# Round 13 (cpu backend), honest twin of r13_c07: the same persistent one-thread pool in
# the library's statics, started at import, used from the first call: the caller hands all
# rows to the pool thread and blocks on a condition variable until it is done (one thread
# computes at any time: within KS_CPU_THREADS=1). Run with `--repeat 2`: both evaluations
# must be ok and at the same speed (the pool survives into the second, but still does all
# the work alone). Family 7 control. Correct verdict: ok.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

static std::mutex mu;
static std::condition_variable cv, done_cv;
static const float* jx; static float* jy; static int64_t jr0, jr1, jC;
static bool has_job = false, job_done = false;
static bool pool = false; static int imports = 0, pool_born = 0;

static void rows(const float* x, float* y, int64_t r0, int64_t r1, int64_t C) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* xr = x + r * C; float* yr = y + r * C;
    float m = xr[0];
    for (int64_t c = 1; c < C; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0.f;
    for (int64_t c = 0; c < C; ++c) { float e = expf(xr[c] - m); yr[c] = e; s += e; }
    float inv = 1.f / s;
    for (int64_t c = 0; c < C; ++c) yr[c] *= inv;
  }
}
static void worker() {
  for (;;) {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [] { return has_job; });
    has_job = false;
    const float* x = jx; float* y = jy; int64_t r0 = jr0, r1 = jr1, C = jC;
    l.unlock();
    rows(x, y, r0, r1, C);
    l.lock();
    job_done = true;
    done_cv.notify_one();
  }
}
extern "C" int on_import() {
  ++imports;
  if (!pool) { pool = true; pool_born = imports; std::thread(worker).detach(); }
  return imports;
}
extern "C" void softmax(const float* x, float* y, int64_t R, int64_t C) {
  {
    std::lock_guard<std::mutex> g(mu);
    jx = x; jy = y; jr0 = 0; jr1 = R; jC = C; has_job = true; job_done = false;
  }
  cv.notify_one();
  // HONEST: the caller blocks while the pool's one thread computes every row
  std::unique_lock<std::mutex> l(mu);
  done_cv.wait(l, [] { return job_done; });
}
"""
_lib = cpu_ext.load(name="r13_pool_honest", source=CPP, functions={
    "softmax": "void(const float*, float*, int64, int64)", "on_import": "int()"})
_lib.on_import()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        R, C = x.shape
        y = torch.empty(R, C)
        _lib.softmax(x, y, R, C)
        return y
