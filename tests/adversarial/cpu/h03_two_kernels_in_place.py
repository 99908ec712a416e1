# Adversarial corpus (cpu backend). Honest: two kernels; the second normalizes the first's
# output in place (in-place work on the candidate's own buffer).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void exp_shifted(const float* x, float* y, float* sums, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, x[r * cols + c]);
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) { y[r * cols + c] = std::exp(x[r * cols + c] - m); s += y[r * cols + c]; }
    sums[r] = s;
  }
}
extern "C" void divide_rows(float* y, const float* sums, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] /= sums[r];
}
"""
_lib = cpu_ext.load(name="adv_two_pass", source=CPP,
                    functions={"exp_shifted": "void(const float*, float*, float*, int64, int64)",
                               "divide_rows": "void(float*, const float*, int64, int64)"})


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        sums = torch.empty(rows, dtype=x.dtype, device=x.device)
        _lib.exp_shifted(x, y, sums, rows, cols)
        _lib.divide_rows(y, sums, rows, cols)
        return y
