# Fault: forks a child that leaves the worker's process group (setsid) and lingers, then exits the worker with os._exit; the sandbox must reap the child too.
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
        if os.fork() == 0:
            os.setsid()
            print(f"ks-fault escapee-pid={os.getpid()}", file=sys.stderr, flush=True)
            time.sleep(600)
            os._exit(0)
        time.sleep(0.5)
        os._exit(4)
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.axpb(x, y, x.numel())
        return y
