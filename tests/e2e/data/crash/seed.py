# cpu seed for the kill -9 test (tests/e2e/crash.sh): column sums in C++ over blocks of BLOCK
# columns and ROWS rows. Two tunables give the tuner enough distinct children to keep
# evaluating across many short, killed sessions.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

# EVOLVE-BLOCK-START
BLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8, 16, 32, 64, 128, 256]
ROWS = 1  # ks:tune ROWS=[1, 2, 4, 8, 16, 32, 64]

CPP_SOURCE = r"""
#include <algorithm>
#include <cstdint>

extern "C" void colsum(const float* x, float* y, int64_t rows, int64_t cols, int64_t block,
                       int64_t row_block) {
  for (int64_t c = 0; c < cols; ++c) y[c] = 0.0f;
  for (int64_t c0 = 0; c0 < cols; c0 += block) {
    const int64_t c1 = std::min(cols, c0 + block);
    for (int64_t r0 = 0; r0 < rows; r0 += row_block) {
      const int64_t r1 = std::min(rows, r0 + row_block);
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = x + r * cols;
        for (int64_t c = c0; c < c1; ++c) y[c] += xr[c];
      }
    }
  }
}
"""

_lib = cpu_ext.load(
    name="colsum_crash",
    source=CPP_SOURCE,
    functions={"colsum": "void(const float*, float*, int64, int64, int64, int64)"},
    openmp=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty(x.shape[1], dtype=x.dtype)
        _lib.colsum(x, y, x.shape[0], x.shape[1], BLOCK, ROWS)
        return y
# EVOLVE-BLOCK-END
