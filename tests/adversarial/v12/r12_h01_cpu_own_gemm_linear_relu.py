# Round 12 (cpu backend), honest twin of r12_c01 and r12_c02: the same linear+ReLU kernel
# interface with a GEMM of its own (register-blocked C++ loops over W^T rows, OpenMP over
# rows of x), no library symbol, no ctypes lookup. Expected: ok (slower than MKL).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
extern "C" void linear_relu(const float* x, const float* w, const float* b, float* y,
                            int64_t M, int64_t K, int64_t N) {
  #pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < M; ++r) {
    const float* xr = x + r * K;
    float* yr = y + r * N;
    for (int64_t c = 0; c < N; c += 4) {
      const float* w0 = w + c * K;
      float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
      const int64_t cn = N - c;
      if (cn >= 4) {
        for (int64_t k = 0; k < K; ++k) {
          const float xv = xr[k];
          a0 += xv * w0[k]; a1 += xv * w0[K + k]; a2 += xv * w0[2 * K + k]; a3 += xv * w0[3 * K + k];
        }
        float v[4] = {a0, a1, a2, a3};
        for (int j = 0; j < 4; ++j) { float t = v[j] + b[c + j]; yr[c + j] = t > 0.f ? t : 0.f; }
      } else {
        for (int64_t j = 0; j < cn; ++j) {
          float a = 0.f;
          for (int64_t k = 0; k < K; ++k) a += xr[k] * w0[j * K + k];
          float t = a + b[c + j]; yr[c + j] = t > 0.f ? t : 0.f;
        }
      }
    }
  }
}
"""
_lib = cpu_ext.load(name="r12_own_gemm", source=CPP, functions={
    "linear_relu": "void(const float*, const float*, const float*, float*, int64, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        y = torch.empty(M, N)
        _lib.linear_relu(x, self.linear.weight.detach(), self.linear.bias.detach(), y, M, K, N)
        return y
