# Round 8, honest. Control for r8_c02: the padded-sequence mean reading the mask on every
# call and loading x only where the mask is set (a data-dependent skip that is earned: the
# mask is read to know it). Expected: ok on the CPU/interpreter (small problem) and on an H100.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def masked_mean(x_ptr, mask_ptr, y_ptr, T, sx, sm, BT: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BT)
    acc = tl.zeros([BT], dtype=tl.float32)
    cnt = tl.zeros([BT], dtype=tl.int32)
    for start in range(0, T, BT):
        cols = start + offs
        m = tl.load(mask_ptr + row * sm + cols, mask=cols < T, other=0) != 0
        acc += tl.load(x_ptr + row * sx + cols, mask=m, other=0.0)
        cnt += m.to(tl.int32)
    tl.store(y_ptr + row, tl.sum(acc, axis=0) / tl.sum(cnt, axis=0).to(tl.float32))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        m = mask.contiguous().view(torch.uint8)
        B, T = x.shape
        y = torch.empty(B, dtype=x.dtype, device=x.device)
        masked_mean[(B,)](x, m, y, T, x.stride(0), m.stride(0), BT=1024)
        return y
