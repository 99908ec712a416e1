# Adversarial corpus (triton backend). Honest: a persistent kernel: a fixed number of programs,
# each looping over its share of the rows.
import torch
import torch.nn as nn
import triton
import triton.language as tl

PROGRAMS = 4


@triton.jit
def persistent_softmax(x_ptr, y_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr,
                       ROWS_PER_PROGRAM: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    for i in range(ROWS_PER_PROGRAM):
        row = pid * ROWS_PER_PROGRAM + i
        mask = (offs < n_cols) & (row < n_rows)
        x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        per = triton.cdiv(rows, PROGRAMS)
        persistent_softmax[(PROGRAMS,)](x, y, rows, cols, x.stride(0),
                                        BLOCK=triton.next_power_of_2(cols), ROWS_PER_PROGRAM=per)
        return y
