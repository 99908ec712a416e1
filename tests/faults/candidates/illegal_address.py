# Fault: an illegal memory access in a compiled kernel (an out-of-bounds write; the CPU stand-in for a CUDA illegal address).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

SOURCE = r"""
#include <cstdint>
extern "C" void axpb_illegal_address(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
  volatile float* far = y + (int64_t{1} << 40);  // 4 TiB past the output
  *far = 0.0f;                                   // out-of-bounds write
}
"""
_lib = cpu_ext.load(name="axpb_illegal_address", source=SOURCE,
                    functions={"axpb_illegal_address": "void(const float*, float*, int64)"}, openmp=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.axpb_illegal_address(x, y, x.numel())
        return y
