# Round 10 (cpu backend), honest twin of r10_c05 and r10_c08: relu(x @ W^T + b) as a C++
# GEMM of its own. The weight is transposed once when ModelNew is built (a [K, N] copy kept
# next to the parameter and refreshed if the parameter changes), so the inner loop runs
# over contiguous rows of W^T that the compiler vectorises; the bias is the accumulator's
# start value and the ReLU the epilogue. One thread (the evaluator's budget).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
#include <cstring>
// y[M,N] = relu(x[M,K] @ wt[K,N] + b[N]), row-major; 4 rows of x at a time.
extern "C" void linear_relu(const float* x, const float* wt, const float* b, float* y,
                            int64_t M, int64_t N, int64_t K) {
  int64_t m = 0;
  for (; m + 4 <= M; m += 4) {
    float* y0 = y + m * N; float* y1 = y0 + N; float* y2 = y1 + N; float* y3 = y2 + N;
    std::memcpy(y0, b, N * sizeof(float)); std::memcpy(y1, b, N * sizeof(float));
    std::memcpy(y2, b, N * sizeof(float)); std::memcpy(y3, b, N * sizeof(float));
    for (int64_t k = 0; k < K; ++k) {
      const float a0 = x[m * K + k], a1 = x[(m + 1) * K + k];
      const float a2 = x[(m + 2) * K + k], a3 = x[(m + 3) * K + k];
      const float* w = wt + k * N;
      for (int64_t n = 0; n < N; ++n) {
        const float wv = w[n];
        y0[n] += a0 * wv; y1[n] += a1 * wv; y2[n] += a2 * wv; y3[n] += a3 * wv;
      }
    }
  }
  for (; m < M; ++m) {
    float* yr = y + m * N;
    std::memcpy(yr, b, N * sizeof(float));
    for (int64_t k = 0; k < K; ++k) {
      const float a = x[m * K + k];
      const float* w = wt + k * N;
      for (int64_t n = 0; n < N; ++n) yr[n] += a * w[n];
    }
  }
  for (int64_t i = 0; i < M * N; ++i) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}
"""
_lib = cpu_ext.load(name="r10_blocked_gemm", source=CPP,
                    functions={"linear_relu": "void(const float*, const float*, const float*, "
                                              "float*, int64, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self._wt: torch.Tensor | None = None
        self._wt_version = -1

    def _weight_t(self) -> torch.Tensor:
        w = self.linear.weight
        if self._wt is None or self._wt_version != w._version:
            self._wt = w.detach().t().contiguous()
            self._wt_version = w._version
        return self._wt

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        wt, b = self._weight_t(), self.linear.bias.detach()
        y = torch.empty(x.shape[0], wt.shape[1], dtype=x.dtype)
        _lib.linear_relu(x, wt, b, y, x.shape[0], wt.shape[1], x.shape[1])
        return y
