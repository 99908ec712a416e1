# Round 23 (cpu backend), honest twin of r23_c04 (and r23_c05): the same softmax kernel, every
# row computed by the calling thread, no helper of any kind. Expected: ok.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
#include <cstring>
#include <cmath>
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
extern "C" void softmax_rows(const float* x, float* y, int64_t R, int64_t C) {
  for (int64_t r = 0; r < R; ++r) softmax_row(x + r * C, y + r * C, C, C);
}
"""
_lib = cpu_ext.load(name="r23_softmax_h", source=CPP,
                    functions={"softmax_rows": "void(const float*, float*, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        r, c = x.shape
        y = torch.empty_like(x)
        _lib.softmax_rows(x, y, r, c)
        return y
