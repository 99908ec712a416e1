# The honest follow-up of the GPU fault entries: y = 2x + 1 in a Triton kernel, so the
# worker that replaced a faulted one is proven to run GPU kernels, not only CPU ones.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2.0 + 1.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        affine_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
