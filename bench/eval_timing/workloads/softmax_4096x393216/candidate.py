# Honest Triton softmax for long rows: one program per row; pass 1 keeps a per-lane running
# max and rescaled sum over BLOCK-wide chunks (online softmax, no reduction inside the loop),
# pass 2 re-reads the row and writes exp(x - max) / sum. Reads the input twice, writes once.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 4096
NUM_WARPS = 8


@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, BLOCK)
    # -1e30, not -inf: exp(m - m_new) stays finite for lanes that only saw masked columns
    m = tl.full([BLOCK], -1e30, tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    inv_sum = 1.0 / tl.sum(s * tl.exp(m - row_max), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) * inv_sum
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


class ModelNew(nn.Module):
    """Softmax over dim 1 of a 2-D tensor with rows of any length."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        softmax_online_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=BLOCK_SIZE,
                                       num_warps=NUM_WARPS)
        return y
# EVOLVE-BLOCK-END
