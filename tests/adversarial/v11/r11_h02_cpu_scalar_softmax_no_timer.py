# Round 11 (cpu backend), honest twin of r11_c08 (and of r11_c05 with one thread): the same
# scalar C++ row softmax, one thread, no timer, no handler, no helper. Its speedup in the same
# run is what r11_c08's and r11_c05's figures are read against.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cmath>
#include <cstdint>
extern "C" void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = expf(xr[c] - m); s += yr[c]; }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}
"""
_lib = cpu_ext.load(name="r11_scalar_softmax", source=CPP,
                    functions={"softmax_rows": "void(const float*, float*, int64, int64)"})


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.softmax_rows(x, y, x.shape[0], x.shape[1])
        return y
