# Test candidate for problem_linear.py: parameters must match the reference's (same seed).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
// y[m, n] = sum_k x[m, k] * w[n, k]
extern "C" void linear(const float* x, const float* w, float* y, int64_t M, int64_t K, int64_t N) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc += x[m * K + k] * w[n * K + k];
      y[m * N + n] = acc;
    }
}
"""
_lib = cpu_ext.load(name="test_linear", source=CPP,
                    functions={"linear": "void(const float*, const float*, float*, int64, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features))

    def forward(self, x):
        x = x.contiguous()
        w = self.weight.contiguous()
        y = torch.empty(x.shape[0], w.shape[0], dtype=x.dtype)
        _lib.linear(x, w, y, x.shape[0], x.shape[1], w.shape[0])
        return y
