# Honest (unusual): softmax with a hardware fast exp: exp(x - m) computed as 2^((x - m)*log2 e)
# with the PTX approximate instruction ex2.approx.f32 through tl.inline_asm_elementwise
# (relative error ~2^-22), whole row in registers. GPU only (inline PTX).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fast_exp2(x):
    return tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32,
                                     is_pure=True, pack=1)


@triton.jit
def asm_softmax_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * cols
    o = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row + o, mask=o < cols, other=-float("inf"))
    e = fast_exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
    e = tl.where(o < cols, e, 0.0)
    tl.store(y_ptr + row + o, e / tl.sum(e, axis=0), mask=o < cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(x2.shape[1])
        asm_softmax_kernel[(x2.shape[0],)](x2, y, x2.shape[1], BLOCK=BLOCK,
                                           num_warps=16 if BLOCK >= 8192 else 4)
        return y.view(x.shape)
