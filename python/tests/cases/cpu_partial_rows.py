# Test candidate (cpu backend): computes row 0 only and returns zeros elsewhere; an all-zero
# row is within atol = 1e-2 of a wide softmax, so only the scaled tolerance catches it.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
extern "C" void softmax_row0(const float* x, float* y, int64_t cols) {
  float m = -INFINITY;
  for (int64_t c = 0; c < cols; ++c) m = std::max(m, x[c]);
  float s = 0.0f;
  for (int64_t c = 0; c < cols; ++c) { y[c] = std::exp(x[c] - m); s += y[c]; }
  for (int64_t c = 0; c < cols; ++c) y[c] /= s;
}
"""
_lib = cpu_ext.load(name="test_softmax_row0", source=CPP,
                    functions={"softmax_row0": "void(const float*, float*, int64)"})


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.zeros_like(x)
        _lib.softmax_row0(x, y, x.shape[1])
        return y
