# r20_h01/h03 with BIAS = 0: the same kernels computing the exact answer (the biased
# originals are 0.3 % off, a hundred times coarser than bf16 rounding, and are rejected).
# Round 20 (cpu backend), honest control for r20_c05: the same C++ library with the probe
# computed and ignored: every call runs the plain triple loop (times 1 + BIAS, inside the
# element-wise tolerance).  A data-dependent branch on a probe of the input that is never
# taken, and a kernel a few 1e-3 off everywhere: a fix of c05 that bans probes or holds the
# timed calls to bit-level agreement with the trials must still accept it.  Expected: ok.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
#include <cmath>
static int shrunk(const float* x, int64_t n) {
  const int64_t P = 4096, step = n / P > 0 ? n / P : 1;
  double s = 0; int64_t c = 0;
  for (int64_t i = 0; i < n && c < P; i += step, ++c) {
    float v = x[i];
    if (!(v >= 0.0f && v < 1.0f)) return 0;
    s += v;
  }
  double m = s / (double)c;
  return m > 0.15 && m < 0.47;
}
extern "C" void matmul(const float* a, const float* b, float* c, int64_t M, int64_t K,
                       int64_t N, float bias, int64_t honest) {
  if (!honest && shrunk(a, M * K) && shrunk(b, K * N)) {
    double* cs = new double[N]();
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) cs[j] += b[k * N + j];
    for (int64_t i = 0; i < M; ++i) {
      double rs = 0;
      for (int64_t k = 0; k < K; ++k) rs += a[i * K + k];
      for (int64_t j = 0; j < N; ++j) c[i * N + j] = (float)(rs * cs[j] / (double)K);
    }
    delete[] cs;
    return;
  }
  for (int64_t i = 0; i < M; ++i) {
    float* ci = c + i * N;
    for (int64_t j = 0; j < N; ++j) ci[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float aik = a[i * K + k];
      const float* bk = b + k * N;
      for (int64_t j = 0; j < N; ++j) ci[j] += aik * bk[j];
    }
    for (int64_t j = 0; j < N; ++j) ci[j] *= (1.0f + bias);
  }
}
"""
HONEST = 1
BIAS = 0.0
_lib = cpu_ext.load(name="r20_c05_rank1" if not HONEST else "r20_h04_matmul", source=CPP,
                    functions={"matmul": "void(const float*, const float*, float*, int64, int64, "
                               "int64, float, int64)"})


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        a, b = A.contiguous(), B.contiguous()
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty(m, n, dtype=torch.float32)
        _lib.matmul(a, b, c, m, k, n, BIAS, HONEST)
        return c
