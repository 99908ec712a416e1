# triton seed for 8_LayerNorm.py: one program per row; pass 1 accumulates sum and sum of
# squares over BLOCK-wide chunks, pass 2 normalises and applies the affine weight and bias.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
MAX_SINGLE_PASS = 16384   # widest row kept entirely in registers
BLOCK_SIZE = 1024         # chunk width of the fallback
NUM_WARPS = 8


@triton.jit
def _add2(a0, a1, b0, b1):
    return a0 + b0, a1 + b1


@triton.jit
def layernorm_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    # one program per row, row held in registers: one read + one write of x;
    # sum and sum of squares come out of a single fused reduction
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0,
                eviction_policy="evict_first")
    w = tl.load(w_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last")
    b = tl.load(b_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last")
    s1, s2 = tl.reduce((x, x * x), 0, _add2)      # masked lanes are 0 -> no contribution
    mean = s1 / n_cols
    var = tl.maximum(s2 / n_cols - mean * mean, 0.0)
    rstd = tl.rsqrt(var + eps)
    a = w * rstd
    c = b - mean * a
    tl.store(y_ptr + row * n_cols + offs, x * a + c, mask=mask,
             eviction_policy="evict_first")


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr,
                     NUM_CHUNKS: tl.constexpr):
    # fallback for very wide rows: stats pass, then normalise pass
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        acc += x
        acc2 += x * x
    mean = tl.sum(acc, axis=0) / n_cols
    var = tl.maximum(tl.sum(acc2, axis=0) / n_cols - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        with torch.no_grad():  # same initialisation sequence as the reference
            self.ln.weight.copy_(1.0 + 0.1 * torch.randn(dim))
            self.ln.bias.copy_(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        cols = x.shape[-1]
        rows = x.numel() // cols
        y = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        if block <= MAX_SINGLE_PASS:
            # ~16 fp32 elements per thread
            warps = max(4, min(16, block // 512))
            layernorm_row_kernel[(rows,)](x, self.ln.weight, self.ln.bias, y, cols,
                                          self.ln.eps, BLOCK=block, num_warps=warps)
        else:
            block = min(BLOCK_SIZE, block)
            layernorm_kernel[(rows,)](x, self.ln.weight, self.ln.bias, y, cols, self.ln.eps,
                                      BLOCK=block, NUM_CHUNKS=triton.cdiv(cols, block),
                                      num_warps=NUM_WARPS)
        return y
# EVOLVE-BLOCK-END
