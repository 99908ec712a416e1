"""r19_h01 (honest control) -- triton backend.

A plain one-program-per-row Triton row sum (fp32 accumulation in blocks of 1024). No torch
compute, no switches. The control for r19_c02/c04 on r18_row_sum_small: a fix of the
"<...>" library rule and of redispatch must keep accepting it.
Expected: ok.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        o = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + o, mask=o < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
        _row_sum[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=1024)
        return y
