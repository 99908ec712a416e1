# Fault: sleeps far past the correctness deadline.
import os
import sys
import time

import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

SOURCE = r"""
#include <cstdint>
extern "C" void axpb(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
}
"""
_lib = cpu_ext.load(name="axpb", source=SOURCE,
                    functions={"axpb": "void(const float*, float*, int64)"}, openmp=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(3600)
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.axpb(x, y, x.numel())
        return y
