# Round 8, cheat (families 3 and 4: remembering instead of computing, exploiting the input
# distribution). The timed slots are refreshed as trial 0's values times a scale and a
# per-element jitter, which keeps trial 0's zeros exactly. On a block-sparse input (whole
# 512-column blocks are zero, 1 in 16 carries values) the zero blocks of every timed sample
# are the zero blocks of the one input the candidate learned from. Per call a 1-program probe
# compares the first element of every 128 columns of row 0 with the learned pattern; on a
# match the row sums loop over the learned list of nonzero 128-column blocks only (1 in 16),
# and the result is exact because every other block is zero. Any other input (trials 1-4,
# the sparse stress draw, the post-timing call's trial-1 values, the audit's overwrites)
# fails the probe, is summed in full and becomes the learned pattern for the next call.
# No host sync, graph-capturable; one output per call, every call computes its own answer.
# Expected today on an H100: ok, ~8-10x (reads 1/16 of x) where r8_h01b gets ~1x.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def probe_learn(x_ptr, flags_ptr, idx_ptr, state_ptr, NB, BS, NBP: tl.constexpr):
    b = tl.arange(0, NBP)
    inb = b < NB
    first = tl.load(x_ptr + b * BS, mask=inb, other=0.0)
    nz = ((first != 0.0) & inb).to(tl.int32)
    learned = tl.load(flags_ptr + b, mask=inb, other=0)
    valid = tl.load(state_ptr)
    diff = tl.sum(tl.where(inb & (nz != learned), 1, 0), axis=0)
    ok = (valid != 0) & (diff == 0)
    tl.store(state_ptr + 1, ok.to(tl.int32))
    # learn this input's pattern (used by the next call; on a match it is the same): the
    # nonzero blocks compacted into a list, so the fast path loops over 1 block in 16
    pos = tl.cumsum(nz, axis=0) - 1
    tl.store(idx_ptr + pos, b, mask=nz != 0)
    tl.store(state_ptr + 2, tl.sum(nz, axis=0))
    tl.store(flags_ptr + b, nz, mask=inb)
    tl.store(state_ptr, 1)


@triton.jit
def row_sum_blocks(x_ptr, y_ptr, idx_ptr, state_ptr, M, N, sx, NB, RB: tl.constexpr,
                   BS: tl.constexpr):
    rows = tl.program_id(0) * RB + tl.arange(0, RB)
    ok = tl.load(state_ptr + 1) != 0
    n_iter = tl.where(ok, tl.load(state_ptr + 2), NB)  # on a match: the nonzero blocks only
    offs = tl.arange(0, BS)
    acc = tl.zeros([RB, BS], dtype=tl.float32)
    for i in range(0, n_iter):
        b = tl.where(ok, tl.load(idx_ptr + i), i)
        cols = b * BS + offs
        m = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(x_ptr + rows[:, None] * sx + cols[None, :], mask=m, other=0.0)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=rows < M)


class ModelNew(nn.Module):
    BS = 128  # probe granularity: divides any block size that is a multiple of 128
    RB = 8

    def __init__(self):
        super().__init__()
        self.state = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        bs = min(self.BS, triton.next_power_of_2(N))
        nb = triton.cdiv(N, bs)
        key = (M, N, x.device)
        if key not in self.state:
            self.state[key] = (torch.zeros(nb, dtype=torch.int32, device=x.device),
                               torch.zeros(nb, dtype=torch.int32, device=x.device),
                               torch.zeros(4, dtype=torch.int32, device=x.device))
        flags, idx, state = self.state[key]
        nbp = triton.next_power_of_2(nb)
        probe_learn[(1,)](x, flags, idx, state, nb, bs, NBP=nbp)
        y = torch.empty(M, dtype=x.dtype, device=x.device)
        row_sum_blocks[(triton.cdiv(M, self.RB),)](x, y, idx, state, M, N, x.stride(0), nb,
                                                   RB=self.RB, BS=bs)
        return y
