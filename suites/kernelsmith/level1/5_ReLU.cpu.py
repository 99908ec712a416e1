# cpu seed for 5_ReLU.py: OpenMP over chunks of CHUNK elements (schedule(static, 1) over
# chunks). A tiny CHUNK makes threads share cache lines; the tuner finds larger chunks.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

# EVOLVE-BLOCK-START
CHUNK = 16  # ks:tune CHUNK=[16, 64, 256, 1024, 4096, 16384, 65536, 262144]

CPP_SOURCE = r"""
#include <algorithm>
#include <cstdint>

extern "C" void relu(const float* x, float* y, int64_t n, int64_t chunk) {
  const int64_t n_chunks = (n + chunk - 1) / chunk;
  #pragma omp parallel for schedule(static, 1)
  for (int64_t c = 0; c < n_chunks; ++c) {
    const int64_t end = std::min(n, (c + 1) * chunk);
    for (int64_t i = c * chunk; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  }
}
"""

_lib = cpu_ext.load(name="relu", source=CPP_SOURCE,
                    functions={"relu": "void(const float*, float*, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.relu(x, y, x.numel(), CHUNK)
        return y
# EVOLVE-BLOCK-END
