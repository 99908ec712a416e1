# Honest (unusual): single-pass online softmax (running max and rescaled running sum, Milakov &
# Gimelshein) over column blocks, then one normalising pass; several programs per row would
# need a combine, so each program owns a row. Exact up to fp32 rounding on any input.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * cols
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, cols, BLOCK):
        o = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row + o, mask=o < cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        scale = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    mx = tl.max(m, axis=0)
    total = tl.sum(s * tl.where(m == -float("inf"), 0.0, tl.exp(m - mx)), axis=0)
    inv = 1.0 / total
    for c0 in range(0, cols, BLOCK):
        o = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row + o, mask=o < cols, other=-float("inf"))
        tl.store(y_ptr + row + o, tl.exp(x - mx) * inv, mask=o < cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty_like(x2)
        online_softmax_kernel[(x2.shape[0],)](x2, y, x2.shape[1], BLOCK=1024)
        return y.view(x.shape)
