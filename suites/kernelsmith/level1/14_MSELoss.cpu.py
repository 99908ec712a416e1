# cpu seed for 14_MSELoss.py: OpenMP reduction of squared differences into double
# accumulators (UNROLL of them per thread, compiled in as a constant), divided by n.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

# EVOLVE-BLOCK-START
UNROLL = 1  # ks:tune UNROLL=[1, 2, 4, 8, 16]

CPP_SOURCE = r"""
#include <cstdint>

constexpr int64_t U = @UNROLL@;

extern "C" void mse(const float* a, const float* b, float* out, int64_t n) {
  double total = 0.0;
  const int64_t n_main = n / U * U;
  #pragma omp parallel reduction(+ : total)
  {
    double acc[U];
    for (int64_t u = 0; u < U; ++u) acc[u] = 0.0;
    #pragma omp for schedule(static)
    for (int64_t i = 0; i < n_main; i += U)
      for (int64_t u = 0; u < U; ++u) {
        const double d = (double)a[i + u] - (double)b[i + u];
        acc[u] += d * d;
      }
    for (int64_t u = 0; u < U; ++u) total += acc[u];
  }
  for (int64_t i = n_main; i < n; ++i) {
    const double d = (double)a[i] - (double)b[i];
    total += d * d;
  }
  out[0] = (float)(total / (double)n);
}
""".replace("@UNROLL@", str(UNROLL))

_lib = cpu_ext.load(name="mse", source=CPP_SOURCE,
                    functions={"mse": "void(const float*, const float*, float*, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        a = predictions.contiguous()
        b = targets.contiguous()
        out = torch.empty((), dtype=torch.float32)
        _lib.mse(a, b, out, a.numel())
        return out
# EVOLVE-BLOCK-END
