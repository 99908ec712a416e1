# triton seed for 12_Cumsum.py: one program per row scans BLOCK-wide chunks in order with
# tl.cumsum, carrying the running total from chunk to chunk.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 128
NUM_WARPS = 4


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr, NUM_CHUNKS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    offs = tl.arange(0, BLOCK)
    carry = tl.sum(tl.zeros([BLOCK], dtype=tl.float32), axis=0)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, tl.cumsum(x, axis=0) + carry, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        block = min(BLOCK_SIZE, triton.next_power_of_2(cols))
        cumsum_kernel[(rows,)](x, y, cols, BLOCK=block, NUM_CHUNKS=triton.cdiv(cols, block),
                               num_warps=NUM_WARPS)
        return y
# EVOLVE-BLOCK-END
