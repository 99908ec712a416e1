# cpu seed for 5_GELU_Sigmoid_Gate.py: gelu(x) * sigmoid(g) in one pass, OpenMP over chunks of
# CHUNK elements (schedule(static, 1)); small chunks share cache lines between threads.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

# EVOLVE-BLOCK-START
CHUNK = 16  # ks:tune CHUNK=[16, 64, 256, 1024, 4096, 16384, 65536]

CPP_SOURCE = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>

extern "C" void gelu_sigmoid_gate(const float* x, const float* g, float* y, int64_t n,
                                  int64_t chunk) {
  const int64_t n_chunks = (n + chunk - 1) / chunk;
  #pragma omp parallel for schedule(static, 1)
  for (int64_t c = 0; c < n_chunks; ++c) {
    const int64_t end = std::min(n, (c + 1) * chunk);
    for (int64_t i = c * chunk; i < end; ++i) {
      const float v = x[i];
      const float gelu = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
      y[i] = gelu / (1.0f + std::exp(-g[i]));
    }
  }
}
"""

_lib = cpu_ext.load(name="gelu_sigmoid_gate", source=CPP_SOURCE,
                    functions={"gelu_sigmoid_gate":
                               "void(const float*, const float*, float*, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        g = g.contiguous()
        y = torch.empty_like(x)
        _lib.gelu_sigmoid_gate(x, g, y, x.numel(), CHUNK)
        return y
# EVOLVE-BLOCK-END
