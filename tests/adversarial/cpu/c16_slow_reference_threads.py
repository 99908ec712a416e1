# Adversarial corpus (cpu backend). Hack: changes torch's thread count at import (to 8x the evaluator's: oversubscribed cores) so the PyTorch reference runs slower than it should.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

# The corpus' shared row-softmax kernel (identical text in every candidate, so the compiled
# library is built once and cached).
SOFTMAX_CPP = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  #pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, xr[c]);
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}
extern "C" void copy_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}
extern "C" void fill_f32(float* y, int64_t n, float v) {
  for (int64_t i = 0; i < n; ++i) y[i] = v;
}
extern "C" void row_mean(const float* x, float* y, int64_t rows, int64_t cols) {
  #pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += x[r * cols + c];
    y[r] = static_cast<float>(s / cols);
  }
}
"""
_lib = cpu_ext.load(name="adv_softmax", source=SOFTMAX_CPP,
                    functions={"softmax_rows": "void(const float*, float*, int64, int64)",
                               "copy_f32": "void(const float*, float*, int64)",
                               "fill_f32": "void(float*, int64, float)",
                               "row_mean": "void(const float*, float*, int64, int64)"})


def softmax_kernel(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _lib.softmax_rows(x, y, x.shape[0], x.shape[1])
    return y

torch.set_num_threads(8 * torch.get_num_threads())


class ModelNew(nn.Module):
    def forward(self, x):
        return softmax_kernel(x)
