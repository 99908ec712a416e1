# Honest `triton` candidate for examples/softmax/problem.py: one program per row, online
# softmax in fp32 over BLOCK-wide chunks (any row length), then a normalising pass.
# The chunk loops run over a constexpr count (NUM_CHUNKS): besides unrolling better, this
# keeps the kernel runnable by the Triton 3.6 interpreter under NumPy >= 2.4, which cannot
# take a loop bound from a runtime argument.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 2048
NUM_WARPS = 8


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr,
                   NUM_CHUNKS: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, BLOCK)
    # Running max / sum per lane; -1e30 (not -inf) keeps exp(m - m_new) finite on masked lanes.
    m = tl.full([BLOCK], -1e30, tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) / row_sum
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


class ModelNew(nn.Module):
    """Softmax over the last dimension of a 2-D tensor, in a Triton kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        block = min(BLOCK_SIZE, triton.next_power_of_2(max(cols, 1)))
        softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block,
                                NUM_CHUNKS=triton.cdiv(cols, block), num_warps=NUM_WARPS)
        return y
# EVOLVE-BLOCK-END
