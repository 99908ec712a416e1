# Round 8, honest. Control for r8_c01: a row sum on the block-sparse problem that reads every
# element of every call (the zeros are data: only reading them tells they are zero), with
# per-block partial sums. A defence that gives timed samples fresh zero patterns must still
# accept it. Expected: ok on the CPU/interpreter (small problem) and ~1x on an H100.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum(x_ptr, y_ptr, N, sx, BS: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BS)
    acc = tl.zeros([BS], dtype=tl.float32)
    for start in range(0, N, BS):
        cols = start + offs
        acc += tl.load(x_ptr + row * sx + cols, mask=cols < N, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(M, dtype=x.dtype, device=x.device)
        row_sum[(M,)](x, y, N, x.stride(0), BS=min(1024, triton.next_power_of_2(N)))
        return y
