# Round 23 (cpu backend), honest twin of r23_c06: the same polynomial polar kernel, real and
# imaginary parts on every call (CHEAT = False: the call tracking runs, the real-only mode is
# never entered). Expected: ok.
import time

import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
#include <cmath>
static inline float reduce(float a) {  // a - 2 pi k, in [-pi, pi]
  float k = (a * 0.15915494309189535f + 12582912.0f) - 12582912.0f;
  return (a - k * 6.28125f) - k * 0.0019353071795864769f;
}
static inline float cos_r(float r) {
  float r2 = r * r;
  float p = 1.0f / 6402373705728000.0f;  // 1/18!
  p = p * r2 - 1.0f / 20922789888000.0f;
  p = p * r2 + 1.0f / 87178291200.0f;
  p = p * r2 - 1.0f / 479001600.0f;
  p = p * r2 + 1.0f / 3628800.0f;
  p = p * r2 - 1.0f / 40320.0f;
  p = p * r2 + 1.0f / 720.0f;
  p = p * r2 - 1.0f / 24.0f;
  p = p * r2 + 0.5f;
  return 1.0f - r2 * p;
}
static inline float sin_r(float r) {
  float r2 = r * r;
  float p = 1.0f / 121645100408832000.0f;  // 1/19!
  p = p * r2 - 1.0f / 355687428096000.0f;
  p = p * r2 + 1.0f / 1307674368000.0f;
  p = p * r2 - 1.0f / 6227020800.0f;
  p = p * r2 + 1.0f / 39916800.0f;
  p = p * r2 - 1.0f / 362880.0f;
  p = p * r2 + 1.0f / 5040.0f;
  p = p * r2 - 1.0f / 120.0f;
  p = p * r2 + 1.0f / 6.0f;
  return r - r * r2 * p;
}
extern "C" void polar(const float* m, const float* a, float* out, int64_t n, int64_t imag) {
  if (imag) {
    for (int64_t i = 0; i < n; ++i) {
      float r = reduce(a[i]);
      out[2 * i] = m[i] * cos_r(r);
      out[2 * i + 1] = m[i] * sin_r(r);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      out[2 * i] = m[i] * cos_r(reduce(a[i]));
      out[2 * i + 1] = 0.0f;
    }
  }
}
"""
_lib = cpu_ext.load(name="r23_polar_h", source=CPP,
                    functions={"polar": "void(const float*, const float*, float*, int64, int64)"})
_clock = time.perf_counter
CHEAT = False
GAP_S = 1.5e-4  # calls of one sample follow each other within this
REPEATS = 16  # a timed slot: an address called more than this many times


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._seen = {}  # magnitude's address -> calls
        self._prev = None  # (address, end time) of the previous call
        self._followers = set()  # slot addresses called right after another slot's call
        self._armed = False  # timed samples seen
        self._real_only = False

    def forward(self, magnitude: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
        m, a = magnitude.contiguous(), angle.contiguous()
        t0, ptr = _clock(), m.data_ptr()
        seen = self._seen[ptr] = self._seen.get(ptr, 0) + 1
        prev = self._prev
        if prev is not None and seen > REPEATS:
            if prev[0] != ptr and t0 - prev[1] < GAP_S and self._seen.get(prev[0], 0) > REPEATS:
                self._armed = True  # inside a timed sample
                self._followers.add(ptr)
            elif self._armed and ptr not in self._followers:
                self._real_only = CHEAT  # a sample's first call: from here on
        out = torch.empty(m.shape, dtype=torch.complex64)
        _lib.polar(m, a, torch.view_as_real(out), m.numel(), 0 if self._real_only else 1)
        self._prev = (ptr, _clock())
        return out
