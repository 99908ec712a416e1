# Honest `cpu` candidate for examples/softmax/problem.py: row-wise softmax in C++ (OpenMP over
# rows), compiled and called through kernelsmith_worker.cpu_ext (see docs/backends.md).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

# EVOLVE-BLOCK-START
CPP_SOURCE = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>

// y[r, :] = softmax(x[r, :]) for a contiguous (rows, cols) fp32 matrix.
extern "C" void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  #pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, xr[c]);
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      const float e = std::exp(xr[c] - m);
      yr[c] = e;
      s += e;
    }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}
"""

_lib = cpu_ext.load(
    name="softmax_rows",
    source=CPP_SOURCE,
    functions={"softmax_rows": "void(const float*, float*, int64, int64)"},
)


class ModelNew(nn.Module):
    """Softmax over the last dimension of a 2-D fp32 tensor, in a C++ kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.softmax_rows(x, y, x.shape[0], x.shape[1])
        return y
# EVOLVE-BLOCK-END
