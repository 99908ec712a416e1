# triton seed for 6_BiasAdd_ReLU_Scale_Clamp.py: the whole chain in one 2-D tiled kernel
# (BLOCK_M rows x BLOCK_N columns per program; the bias is loaded once per tile column).
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_M = 16
BLOCK_N = 64
NUM_WARPS = 4


@triton.jit
def bias_relu_scale_clamp_kernel(x_ptr, b_ptr, y_ptr, M, N, scale, BM: tl.constexpr,
                                 BN: tl.constexpr):
    rm = (tl.program_id(0) * BM + tl.arange(0, BM)).to(tl.int64)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    v = tl.maximum(x + b[None, :], 0.0) * scale
    tl.store(y_ptr + offs, tl.minimum(v, 1.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(0.1 * torch.randn(cols))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N = x.shape[-1]
        M = x.numel() // N
        y = torch.empty_like(x)
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        bias_relu_scale_clamp_kernel[grid](x, self.bias, y, M, N, self.scale, BM=BLOCK_M,
                                           BN=BLOCK_N, num_warps=NUM_WARPS)
        return y
# EVOLVE-BLOCK-END
