# Fault (GPU only): a Triton kernel that stores far outside its output — CUDA reports an
# illegal memory access and the worker's CUDA context is poisoned.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def axpb_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs + (1 << 40), x * 2.0 + 1.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        axpb_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
