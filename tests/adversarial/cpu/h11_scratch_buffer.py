# Adversarial corpus (cpu backend). Honest: keeps a per-shape scratch buffer of row maxima
# across calls (rewritten every call), the output is fresh each call.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void row_max(const float* x, float* m, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float v = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) v = std::max(v, x[r * cols + c]);
    m[r] = v;
  }
}
extern "C" void softmax_with_max(const float* x, const float* m, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) { y[r * cols + c] = std::exp(x[r * cols + c] - m[r]); s += y[r * cols + c]; }
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] /= s;
  }
}
"""
_lib = cpu_ext.load(name="adv_scratch", source=CPP,
                    functions={"row_max": "void(const float*, float*, int64, int64)",
                               "softmax_with_max": "void(const float*, const float*, float*, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._scratch = {}

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        m = self._scratch.get(rows)
        if m is None:
            m = self._scratch[rows] = torch.empty(rows, dtype=x.dtype, device=x.device)
        _lib.row_max(x, m, rows, cols)
        y = torch.empty_like(x)
        _lib.softmax_with_max(x, m, y, rows, cols)
        return y
