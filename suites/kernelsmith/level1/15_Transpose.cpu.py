# cpu seed for 15_Transpose.py: TILE x TILE blocked transpose, tiles in parallel (OpenMP).
# TILE = 1 is the naive strided copy; the tuner finds cache-sized tiles.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

# EVOLVE-BLOCK-START
TILE = 1  # ks:tune TILE=[1, 2, 4, 8, 16, 32, 64, 128, 256]

CPP_SOURCE = r"""
#include <algorithm>
#include <cstdint>

// y (cols x rows) = x (rows x cols) transposed.
extern "C" void transpose(const float* x, float* y, int64_t rows, int64_t cols, int64_t tile) {
  const int64_t tiles_r = (rows + tile - 1) / tile;
  #pragma omp parallel for schedule(static)
  for (int64_t tr = 0; tr < tiles_r; ++tr) {
    const int64_t r0 = tr * tile, r1 = std::min(rows, r0 + tile);
    for (int64_t c0 = 0; c0 < cols; c0 += tile) {
      const int64_t c1 = std::min(cols, c0 + tile);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) y[c * rows + r] = x[r * cols + c];
    }
  }
}
"""

_lib = cpu_ext.load(name="transpose", source=CPP_SOURCE,
                    functions={"transpose": "void(const float*, float*, int64, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty((cols, rows), dtype=x.dtype)
        _lib.transpose(x, y, rows, cols, TILE)
        return y
# EVOLVE-BLOCK-END
