# Round 8 honest twin of r8_c08 (added later, for its GPU figure): the same probe and fused
# masked softmax kernels, but the "learned" flag is never set, so the probe never passes and
# every call reads the mask (scores + mask in one pass, one write). What an honest fused
# kernel gains over torch's add + softmax (two passes over 32 MiB more); r8_c08 is compared
# with it.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def probe(mask_ptr, len_ptr, state_ptr, R, T, sm, BR: tl.constexpr):
    r = tl.arange(0, BR)
    inr = r < R
    L = tl.load(len_ptr + r, mask=inr, other=1)
    last = tl.load(mask_ptr + r * sm + (L - 1), mask=inr & (L >= 1), other=1.0)
    after = tl.load(mask_ptr + r * sm + L, mask=inr & (L < T), other=float("-inf"))
    good = (L >= 1) & (last == 0.0) & (tl.abs(after) == float("inf"))
    bad = tl.sum(tl.where(inr & ~good, 1, 0), axis=0)
    ok = (tl.load(state_ptr) != 0) & (bad == 0)
    tl.store(state_ptr + 1, ok.to(tl.int32))


@triton.jit
def masked_softmax(s_ptr, mask_ptr, y_ptr, len_ptr, state_ptr, T, ss, sm, sy,
                   BT: tl.constexpr):
    row = tl.program_id(0)
    ok = tl.load(state_ptr + 1)
    cols = tl.arange(0, BT)
    inb = cols < T
    if ok != 0:  # remembered length: the mask is not read
        L = tl.load(len_ptr + row)
        x = tl.load(s_ptr + row * ss + cols, mask=cols < L, other=float("-inf"))
    else:
        m = tl.load(mask_ptr + row * sm + cols, mask=inb, other=float("-inf"))
        x = tl.load(s_ptr + row * ss + cols, mask=inb, other=float("-inf")) + m
        finite = (m == 0.0) & inb
        tl.store(len_ptr + row, tl.sum(finite.to(tl.int32), axis=0))  # for the next call
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * sy + cols, e / tl.sum(e, axis=0), mask=inb)


@triton.jit
def set_learned(state_ptr):
    tl.store(state_ptr, 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.state = {}

    def forward(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        scores, mask = scores.contiguous(), mask.contiguous()
        R, T = scores.shape
        key = (R, T, scores.device)
        if key not in self.state:
            self.state[key] = (torch.zeros(R, dtype=torch.int32, device=scores.device),
                               torch.zeros(2, dtype=torch.int32, device=scores.device))
        lengths, state = self.state[key]
        probe[(1,)](mask, lengths, state, R, T, mask.stride(0), BR=triton.next_power_of_2(R))
        y = torch.empty_like(scores)
        masked_softmax[(R,)](scores, mask, y, lengths, state, T, scores.stride(0),
                             mask.stride(0), y.stride(0), BT=triton.next_power_of_2(T),
                             num_warps=8)
        # set_learned is never launched: state[0] stays 0, the probe never passes
        return y
