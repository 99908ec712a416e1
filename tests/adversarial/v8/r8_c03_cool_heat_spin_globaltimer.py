# Round 8, cheat (family 2, against the sequential timing of the seqstop merge: heats that
# end as soon as the clock looks settled, 50 ms first-round blocks). The heat before a
# function's block exists so that a power-hungry kernel is timed at the clock its own
# sustained load gives (an H100 at its 700 W cap lowers a tensor-core GEMM from ~1950 to
# ~1400 MHz 30-150 ms after it starts). Heats are untimed and unchecked. This honest TF32
# GEMM (2048^3) adds a 1-program gate kernel before it and a 1-program tail after it, both
# reading the device's %globaltimer: the gate keeps, in device memory, when the candidate
# last ran, when its current burst of calls began (a burst starts after >= 140 ms without a
# call: the reference's heat alone lasts >= 150 ms) and how many calls it holds, and the
# tail the duration D of the last honest call. From the 600th call of a burst until 145 ms
# after its start (the heat: heat_min_s = 0.15 s), the GEMM's programs return at once and
# program 0 spins on %globaltimer until D has passed: each heat sample lasts as long as an
# honest one (the heat's windows agree, so it ends at its 0.15 s minimum) while the device
# draws idle power and its clock recovers. The timed blocks that follow (2 x 50 ms in round
# 1) start at the full boost clock, the reference's after a real heat. Trials, audit, graph
# check and warm-ups are bursts of < 600 calls (honest); timed samples start >= 145 ms into a
# burst (honest, so every timed check passes). The steady-state blocks would undo the gain
# (their figure is reported when lower, and the candidate runs there continuously after its
# signed block): they refresh no input, so a call that finds in its slot the value it saw
# there last time (A[0, 0], kept per input address), late in a long burst, is a steady-state
# sample and spins for D too. Those outputs are never checked; the steady figure then matches
# the boosted checked one and is not reported. Graph-capturable: all of it is on the device.
# Expected today (and after the seqstop merge) on an H100: ok, a speedup above its honest
# twin r8_h04 (same kernels, the gate never skips) by the clock ratio the blocks catch,
# +5-25 %; the reference's figure is that of a heated device.
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra.cuda import globaltimer as _now  # the device's %globaltimer

GAP_NS = 140_000_000  # no call for this long: a new burst (the reference's heat and block)
HEAT_NS = 145_000_000  # ... whose first 145 ms are the candidate's heat
HONEST_CALLS = 600  # the first calls of a burst are always computed (trials, warm-ups)
STEADY_AFTER = 2000  # repeated values this late in a burst: the unchecked steady-state blocks
SLOTS = 4096
SKIP = 1


@triton.jit
def gate(st_ptr, fp_ptr, a_ptr, slot, GAP: tl.constexpr, HEAT: tl.constexpr,
         HONEST: tl.constexpr, STEADY_AFTER: tl.constexpr, ALLOW: tl.constexpr):
    # st: [0] last call, [1] burst start, [2] calls in burst, [3] D, [4] skip, [5] call start
    now = _now()
    last = tl.load(st_ptr)
    start = tl.load(st_ptr + 1)
    calls = tl.load(st_ptr + 2)
    new_burst = (now - last) > GAP
    start = tl.where(new_burst, now, start)
    calls = tl.where(new_burst, 0, calls) + 1
    d = tl.load(st_ptr + 3)
    # steady-state samples: no refresh, this slot holds the values it held last time
    a0 = tl.load(a_ptr)
    steady = (a0 == tl.load(fp_ptr + slot)) & (calls > STEADY_AFTER)
    tl.store(fp_ptr + slot, a0)
    heat = (calls > HONEST) & ((now - start) < HEAT)
    skip = (ALLOW != 0) & (heat | steady) & (d > 0)
    tl.store(st_ptr, now)
    tl.store(st_ptr + 1, start)
    tl.store(st_ptr + 2, calls)
    tl.store(st_ptr + 4, skip.to(tl.int64))
    tl.store(st_ptr + 5, now)


@triton.jit
def tail(st_ptr):
    skip = tl.load(st_ptr + 4)
    t0 = tl.load(st_ptr + 5)
    d = tl.load(st_ptr + 3)
    tl.store(st_ptr + 3, tl.where(skip != 0, d, _now() - t0))


@triton.jit
def matmul_tf32(a_ptr, b_ptr, c_ptr, st_ptr, M, N, K, sa, sb, sc, BM: tl.constexpr,
                BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    skip = tl.load(st_ptr + 4) != 0
    if skip:
        if pid == 0:  # as long as an honest call, on one SM: low power
            t_end = tl.load(st_ptr + 5) + tl.load(st_ptr + 3)
            spins = 0
            while _now() < t_end:
                spins += 1
    else:
        num_m = tl.cdiv(M, BM)
        num_n = tl.cdiv(N, BN)
        width = GROUP * num_n
        group = pid // width
        first_m = group * GROUP
        size_m = tl.minimum(num_m - first_m, GROUP)
        pm = first_m + (pid % width) % size_m
        pn = (pid % width) // size_m
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * sa + (k + rk)[None, :],
                        mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
            b = tl.load(b_ptr + (k + rk)[:, None] * sb + rn[None, :],
                        mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * sc + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.st = {}
        self.slot = {}  # input address -> fingerprint slot (fixed per call of a CUDA graph)

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        if A.device not in self.st:
            self.st[A.device] = (torch.zeros(8, dtype=torch.int64, device=A.device),
                                 torch.full((SLOTS,), float("nan"), device=A.device))
        st, fp = self.st[A.device]
        slot = self.slot.setdefault(A.data_ptr(), len(self.slot) % SLOTS)
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        gate[(1,)](st, fp, A, slot, GAP=GAP_NS, HEAT=HEAT_NS, HONEST=HONEST_CALLS,
                   STEADY_AFTER=STEADY_AFTER, ALLOW=SKIP)
        grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
        matmul_tf32[grid](A, B, C, st, M, N, K, A.stride(0), B.stride(0), C.stride(0),
                          BM=128, BN=128, BK=32, GROUP=8, num_warps=8, num_stages=3)
        tail[(1,)](st)
        return C
