# triton seed for 11_MaxReduction.py: one program per row reduces (max) BLOCK-wide chunks into a
# vector accumulator, then reduces the vector.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 128
NUM_WARPS = 4


@triton.jit
def rowmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr, NUM_CHUNKS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    offs = tl.arange(0, BLOCK)
    acc = tl.full([BLOCK], -float("inf"), tl.float32)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        acc = tl.maximum(acc, x)
    tl.store(y_ptr + row, tl.max(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty(rows, dtype=x.dtype, device=x.device)
        block = min(BLOCK_SIZE, triton.next_power_of_2(cols))
        rowmax_kernel[(rows,)](x, y, cols, x.stride(0), BLOCK=block,
                              NUM_CHUNKS=triton.cdiv(cols, block), num_warps=NUM_WARPS)
        return y
# EVOLVE-BLOCK-END
