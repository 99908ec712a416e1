# Fault: a segfault inside a compiled extension (null pointer write in a cpu_ext kernel).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

SOURCE = r"""
#include <cstdint>
extern "C" void axpb_segfault(const float* x, float* y, int64_t n) {
  volatile int* p = nullptr;
  *p = 42;  // null pointer write: SIGSEGV
  (void)x; (void)y; (void)n;
}
"""
_lib = cpu_ext.load(name="axpb_segfault", source=SOURCE,
                    functions={"axpb_segfault": "void(const float*, float*, int64)"}, openmp=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.axpb_segfault(x, y, x.numel())
        return y
