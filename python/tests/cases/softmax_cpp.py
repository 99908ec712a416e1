# Shared by the cpu test candidates: a plain C++ row softmax through kernelsmith_worker.cpu_ext.
# Candidates import it as `from softmax_cpp import kernel_softmax` (conftest and the worker
# tests put this folder on the path).
import torch

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, xr[c]);
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
  }
}
"""
_lib = cpu_ext.load(name="test_softmax", source=CPP,
                    functions={"softmax_rows": "void(const float*, float*, int64, int64)"})


def kernel_softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _lib.softmax_rows(x, y, x.shape[0], x.shape[1])
    return y
