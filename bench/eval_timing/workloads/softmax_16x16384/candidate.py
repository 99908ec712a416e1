# Honest Triton softmax for short rows: one program per row holds the whole row in
# registers (one read, one write), max and sum reduced in fp32.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
NUM_WARPS = 16


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    """Softmax over dim 1 of a 2-D tensor whose rows fit in one program (<= 32768 columns)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        softmax_row_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block,
                                    num_warps=NUM_WARPS)
        return y
# EVOLVE-BLOCK-END
