# Fault (GPU only): a Triton kernel that never terminates (its loop bound comes from the data,
# so the compiler cannot prove anything) — only the stage deadline can stop it.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def spin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = x
    while tl.max(acc, axis=0) < 1.0e30:  # acc converges to 2x < 2: never false
        acc = acc * 0.5 + x
    tl.store(y_ptr + offs, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        spin_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
