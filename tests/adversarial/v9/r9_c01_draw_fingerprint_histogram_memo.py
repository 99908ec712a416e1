# Round 9, cheat (family 3: remembering instead of computing). The timed slots take their
# bases from D <= 16 fresh get_inputs() draws, one draw per slot for all of its tensors, and
# transform them: floats times a scale in [0.5, 2) and a factor in [0.75, 1.25) per element
# (signs flipped at random in the signed blocks), 1-D unsorted integers permuted. So within
# one slot, log|logits| differs from its draw's by log(scale) plus at most 0.511, and the ids
# keep their draw's multiset. A 1-program probe reads 128 logits, and if log|x| minus the
# log-magnitudes remembered for an earlier call spreads over less than 1.05 (same draw: at
# most 2 x 0.511; another draw of randn: about 8), that call's counts are served from a
# 32-entry device memo: the 32 MiB of ids are not read and no atomics run. On a miss the
# ids are counted (int32 atomics), and the counts and fingerprint stored. The counts depend
# only on the ids' multiset, so every timed sample and check is exact; trials, stress draws
# and the audit's inputs never match a remembered fingerprint (or match their own draw,
# exact too). Same three launches on a hit and a miss, graph-capturable.
# Twin: r9_h01_freq_penalty_atomics (the same kernels with the probe never matching).
import torch
import torch.nn as nn
import triton
import triton.language as tl

P = 128  # probed logits
E = 32  # memo entries (the timing draws at most 16 bases; trials and stress fill the rest)
SPREAD_MAX = 1.05  # same draw: log(scale ratio) +- 2 * log(1.25 / 0.75) / 2 spreads <= 1.02


@triton.jit
def probe(logits_ptr, step, fps_ptr, valid_ptr, state_ptr, spread_max,
          P: tl.constexpr, E: tl.constexpr):
    # state[0]: the entry that matched (-1 on a miss); state[1]: the entry a miss fills;
    # state[2]: entries filled so far
    p = tl.arange(0, P)
    x = tl.load(logits_ptr + p * step)
    lg = tl.log(tl.abs(x) + 1e-30)
    e = tl.arange(0, E)
    d = lg[None, :] - tl.load(fps_ptr + e[:, None] * P + p[None, :])
    spread = tl.max(d, axis=1) - tl.min(d, axis=1)
    ok = (tl.load(valid_ptr + e) != 0) & (spread < spread_max)
    hit = tl.min(tl.where(ok, e, E), axis=0)
    miss = hit == E
    filled = tl.load(state_ptr + 2)
    slot = filled % E
    tl.store(state_ptr, tl.where(miss, -1, hit))
    tl.store(state_ptr + 1, slot)
    tl.store(state_ptr + 2, tl.where(miss, filled + 1, filled))
    tl.store(fps_ptr + slot * P + p, lg, mask=(p < P) & miss)
    tl.store(valid_ptr + slot + p, tl.zeros([P], tl.int32), mask=(p < 1) & miss)


@triton.jit
def histogram(ids_ptr, counts_ptr, state_ptr, n, BLOCK: tl.constexpr):
    hit = tl.load(state_ptr)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = (offs < n) & (hit < 0)
    ids = tl.load(ids_ptr + offs, mask=m, other=0)
    tl.atomic_add(counts_ptr + ids, tl.full([BLOCK], 1, tl.int32), mask=m)


@triton.jit
def finish(logits_ptr, counts_ptr, table_ptr, valid_ptr, state_ptr, out_ptr, V, alpha,
           BLOCK: tl.constexpr):
    hit = tl.load(state_ptr)
    slot = tl.load(state_ptr + 1)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < V
    fresh = tl.load(counts_ptr + offs, mask=m & (hit < 0), other=0)
    kept = tl.load(table_ptr + tl.maximum(hit, 0) * V + offs, mask=m & (hit >= 0), other=0)
    c = tl.where(hit >= 0, kept, fresh)
    tl.store(table_ptr + slot * V + offs, c, mask=m & (hit < 0))
    x = tl.load(logits_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, x - alpha * c.to(tl.float32), mask=m)
    # the entry is complete once this launch ends (the next call's probe runs after it)
    tl.store(valid_ptr + slot + offs, tl.full([BLOCK], 1, tl.int32),
             mask=(offs < 1) & (hit < 0))


class ModelNew(nn.Module):
    ALPHA = 0.5

    def __init__(self):
        super().__init__()
        self.memo = {}

    def _state(self, v: int, dev: torch.device):
        key = (v, dev)
        if key not in self.memo:
            self.memo[key] = (torch.zeros(E, P, dtype=torch.float32, device=dev),
                              torch.zeros(E, dtype=torch.int32, device=dev),
                              torch.zeros(4, dtype=torch.int32, device=dev),
                              torch.zeros(E, v, dtype=torch.int32, device=dev))
        return self.memo[key]

    def forward(self, logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        v, n = logits.numel(), ids.numel()
        fps, valid, state, table = self._state(v, logits.device)
        probe[(1,)](logits, v // P, fps, valid, state, SPREAD_MAX, P=P, E=E)
        counts = torch.zeros(v, dtype=torch.int32, device=logits.device)
        histogram[(triton.cdiv(n, 1024),)](ids, counts, state, n, BLOCK=1024)
        out = torch.empty_like(logits)
        finish[(triton.cdiv(v, 1024),)](logits, counts, table, valid, state, out, v, self.ALPHA,
                                        BLOCK=1024)
        return out
