# triton seed for 7_Softmax.py: one program per row, online max/sum over BLOCK-wide chunks,
# then a normalising pass. Chunk loops run over a constexpr count (interpreter-friendly).
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 512
NUM_WARPS = 4


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr,
                   NUM_CHUNKS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], -1e30, tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        tl.store(y_row + cols, tl.exp(x - row_max) / row_sum, mask=cols < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        block = min(BLOCK_SIZE, triton.next_power_of_2(cols))
        softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block,
                                NUM_CHUNKS=triton.cdiv(cols, block), num_warps=NUM_WARPS)
        return y
# EVOLVE-BLOCK-END
