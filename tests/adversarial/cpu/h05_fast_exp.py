# Adversarial corpus (cpu backend). Honest: an approximate exp (range reduction + degree-5
# polynomial, relative error about 1e-6) instead of std::exp: approximate math well within
# the tolerance.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
static inline float fast_exp(float v) {
  v = std::max(v, -80.0f);
  const float t = v * 1.44269504f;            // v / ln 2
  const float k = std::floor(t);
  const float f = (t - k) * 0.69314718f;      // in [0, ln 2)
  const float p = 1.0f + f * (1.0f + f * (0.5f + f * (0.16666667f + f * (0.04166667f + f * 0.00833333f))));
  return std::ldexp(p, static_cast<int>(k));
}
extern "C" void softmax_fast(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, xr[c]);
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = fast_exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
  }
}
"""
_lib = cpu_ext.load(name="adv_fast_exp", source=CPP,
                    functions={"softmax_fast": "void(const float*, float*, int64, int64)"})


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.softmax_fast(x, y, x.shape[0], x.shape[1])
        return y
