# cpu seed for 11_MaxReduction.py: rows in parallel (OpenMP); each row is reduced (max) with UNROLL
# independent accumulators. UNROLL is compiled in as a constant, so with 1 accumulator the
# loop is a serial dependency chain; more accumulators let the compiler vectorise.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

# EVOLVE-BLOCK-START
UNROLL = 1  # ks:tune UNROLL=[1, 2, 4, 8, 16, 32]

CPP_SOURCE = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>

constexpr int64_t U = @UNROLL@;

extern "C" void rowmax(const float* x, float* y, int64_t rows, int64_t cols) {
  #pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float acc[U];
    for (int64_t u = 0; u < U; ++u) acc[u] = -INFINITY;
    int64_t c = 0;
    for (; c + U <= cols; c += U)
      for (int64_t u = 0; u < U; ++u) acc[u] = std::max(acc[u], xr[c + u]);
    float s = -INFINITY;
    for (int64_t u = 0; u < U; ++u) s = std::max(s, acc[u]);
    for (; c < cols; ++c) s = std::max(s, xr[c]);
    y[r] = s;
  }
}
""".replace("@UNROLL@", str(UNROLL))

_lib = cpu_ext.load(name="rowmax", source=CPP_SOURCE,
                    functions={"rowmax": "void(const float*, float*, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty(x.shape[0], dtype=x.dtype)
        _lib.rowmax(x, y, x.shape[0], x.shape[1])
        return y
# EVOLVE-BLOCK-END
