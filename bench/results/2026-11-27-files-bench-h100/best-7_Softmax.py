# triton seed for 7_Softmax.py: one program per row, online max/sum over BLOCK-wide chunks,
# then a normalising pass. Chunk loops run over a constexpr count (interpreter-friendly).
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 4096
NUM_WARPS = 16


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr,
                   NUM_CHUNKS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, BLOCK)
    # pass 1: scalar online max / sum (one exp per element); keep the row in L2
    x = tl.load(x_row + offs, mask=offs < n_cols, other=-float("inf"),
                eviction_policy="evict_last")
    m = tl.max(x, axis=0)
    s = tl.sum(tl.exp(x - m), axis=0)
    for chunk in tl.static_range(1, NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"),
                    eviction_policy="evict_last")
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    inv = 1.0 / s
    # pass 2: reverse order, so the most recently loaded chunks (still in L2) come first
    for i in tl.static_range(NUM_CHUNKS):
        cols = (NUM_CHUNKS - 1 - i) * BLOCK + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf"),
                    eviction_policy="evict_first")
        tl.store(y_row + cols, tl.exp(x - m) * inv, mask=mask,
                 eviction_policy="evict_first")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        block = min(BLOCK_SIZE, triton.next_power_of_2(cols))
        warps = NUM_WARPS if block >= 4096 else (8 if block >= 1024 else 4)
        softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block,
                                NUM_CHUNKS=triton.cdiv(cols, block), num_warps=warps)
        return y
# EVOLVE-BLOCK-END
