# triton seed for 5_GELU_Sigmoid_Gate.py: gelu(x) * sigmoid(g) fused in one elementwise kernel, one program per
# BLOCK_SIZE-element chunk.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 256
NUM_WARPS = 4


@triton.jit
def fused_kernel(x_ptr, g_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)) * tl.sigmoid(g)
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        g = g.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        fused_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, g, out, n, BLOCK=BLOCK_SIZE, num_warps=NUM_WARPS)
        return out
# EVOLVE-BLOCK-END
