# Round 8, cheat (family 3/4: remembering instead of computing). The timed refresh multiplies
# trial 0's floating point values by positive factors (and, in the signed blocks, by random
# signs): zeros stay zero and -inf stays infinite. An additive attention mask (0 for valid
# positions, -inf for padding) is therefore trial 0's mask in every timed sample, up to the
# sign of the infinities. The candidate remembers each row's valid length: per call a
# 1-program probe checks, for every row, that mask[r, L_r - 1] == 0 and |mask[r, L_r]| is
# inf (2 values a row); on a match the softmax reads only scores[r, :L_r] and never the
# 32 MiB mask, and writes zeros after L_r. Any other input (trials 1-4, the stress draws,
# which redraw the infinities as finite values, the post-timing trial-1 values, the audit's
# overwrites) fails the probe, is computed from scores + mask, and its lengths (count of
# finite mask entries of a prefix mask) become the remembered ones. On the signed blocks the
# reference's output is NaN (+inf - inf) and the timed check is skipped; the cheat stays fast
# there, so no value_dependent_speed. Exact, graph-capturable, no host sync.
# Expected today on an H100: ok, about 1.7-2x above an honest fused kernel that reads the
# mask (it moves ~6 B/element instead of ~12).
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
        set_learned[(1,)](state)
        return y
