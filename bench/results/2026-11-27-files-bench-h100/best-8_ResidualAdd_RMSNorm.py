# triton seed for 8_ResidualAdd_RMSNorm.py: one program per row; pass 1 forms h = x + r and
# accumulates sum(h^2) over BLOCK-wide chunks, pass 2 recomputes h and scales it.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 256
NUM_WARPS = 4
MAX_SINGLE_PASS = 16384


@triton.autotune(
    configs=[
        triton.Config({}, num_warps=4),
        triton.Config({}, num_warps=8),
        triton.Config({}, num_warps=16),
    ],
    key=["n_cols"],
)
@triton.jit
def add_rmsnorm_row_kernel(x_ptr, r_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    # whole row in registers: x and r are read exactly once, y written once (plain loads,
    # no eviction hints: pure streaming traffic, nothing to keep in L2 except w)
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
    r = tl.load(r_ptr + base + cols, mask=mask, other=0.0)
    h = x.to(tl.float32) + r.to(tl.float32)
    ms = tl.sum(h * h, axis=0) / n_cols
    rstd = tl.rsqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = h * rstd * w
    tl.store(y_ptr + base + cols, y, mask=mask)


@triton.jit
def add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr,
                       NUM_CHUNKS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        mask = cols < n_cols
        h = tl.load(x_ptr + base + cols, mask=mask, other=0.0) + \
            tl.load(r_ptr + base + cols, mask=mask, other=0.0)
        acc += h * h
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        mask = cols < n_cols
        h = tl.load(x_ptr + base + cols, mask=mask, other=0.0) + \
            tl.load(r_ptr + base + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + base + cols, h * rstd * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        residual = residual.contiguous()
        cols = x.shape[-1]
        rows = x.numel() // cols
        y = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        if block <= MAX_SINGLE_PASS:
            add_rmsnorm_row_kernel[(rows,)](x, residual, self.weight, y, cols, self.eps,
                                            BLOCK=block)
        else:
            block = min(BLOCK_SIZE, block)
            add_rmsnorm_kernel[(rows,)](x, residual, self.weight, y, cols, self.eps, BLOCK=block,
                                        NUM_CHUNKS=triton.cdiv(cols, block), num_warps=NUM_WARPS)
        return y
# EVOLVE-BLOCK-END
