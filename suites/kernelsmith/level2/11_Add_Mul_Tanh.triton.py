# triton seed for 11_Add_Mul_Tanh.py: tanh((x + y) * z) fused in one elementwise kernel, one program per
# BLOCK_SIZE-element chunk.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 256
NUM_WARPS = 4


@triton.jit
def fused_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    yv = tl.load(y_ptr + offs, mask=mask, other=0.0)
    z = tl.load(z_ptr + offs, mask=mask, other=0.0)
    v = (x + yv) * z
    y = 2.0 * tl.sigmoid(2.0 * v) - 1.0  # tanh(v)
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = y.contiguous()
        z = z.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        fused_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, z, out, n, BLOCK=BLOCK_SIZE, num_warps=NUM_WARPS)
        return out
# EVOLVE-BLOCK-END
