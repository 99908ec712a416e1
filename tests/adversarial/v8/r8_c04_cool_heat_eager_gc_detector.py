# Round 8, cheat (family 2, against the sequential timing of the seqstop merge; eager
# variant of r8_c03 with a host-side detector). Forward queries its stream
# (torch.cuda.current_stream().query(): free when eager, an error that ends a CUDA graph
# capture), so both functions are timed eagerly (events around k calls, host wall clock).
# The skip decision is taken on the host: gc.isenabled() is False only inside time_pair()
# (the timing stage disables the garbage collector, nothing else does), and the host clock
# delimits bursts of calls (>= 140 ms without a call: the reference's turn). From the 600th
# call of a timed burst until 145 ms after its start (the candidate's heat, heat_min_s =
# 0.15 s) the GEMM's programs return at once and program 0 spins on %globaltimer for the
# duration D of the last honest call (measured on the device by the gate and tail kernels):
# heat windows agree, the heat stops at its minimum, the device idles and its clock
# recovers, and the candidate's 50 ms first-round blocks run at the boost clock while the
# reference's follow a real heat. Late in a long timed burst a call that finds in its input
# the value it saw there last time (no refresh: the unchecked steady-state blocks, whose
# lower figure would be reported) spins for D as well. Every launch is the candidate's own
# Triton kernel on the current stream (accounted, none foreign, same launches per call);
# every refreshed timed sample and check is computed honestly; trials, audit and the
# post-timing call run with gc enabled.
# Expected after the seqstop merge on an H100: ok, not_graph_capturable (info), a speedup
# above r8_h04's by the clock ratio the blocks catch (+5-25 %).
import gc
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra.cuda import globaltimer as _now  # the device's %globaltimer

GAP_S = 0.140  # no call for this long: a new burst (the reference's heat and block)
HEAT_S = 0.145  # ... whose first 145 ms are the candidate's heat
HONEST_CALLS = 600  # the first calls of a burst are always computed (warm-ups, checks)
STEADY_AFTER = 2000  # repeated values this late in a timed burst: the steady-state blocks
SLOTS = 4096


@triton.jit
def gate(st_ptr, fp_ptr, a_ptr, slot, host_heat, host_long):
    # st: [3] D (last honest call), [4] skip, [5] call start; fp: last A[0, 0] per input
    d = tl.load(st_ptr + 3)
    a0 = tl.load(a_ptr)
    steady = (host_long != 0) & (a0 == tl.load(fp_ptr + slot))  # no refresh: steady state
    tl.store(fp_ptr + slot, a0)
    skip = ((host_heat != 0) | steady) & (d > 0)
    tl.store(st_ptr + 4, skip.to(tl.int64))
    tl.store(st_ptr + 5, _now())


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
        self.slot = {}  # input address -> fingerprint slot
        self.last = self.start = 0.0
        self.calls = 0

    def _skip(self) -> tuple[int, int]:
        """(heat, long): a call of the candidate's heat; a call late in a long timed burst."""
        now = time.perf_counter()
        if now - self.last > GAP_S:
            self.start, self.calls = now, 0
        self.last = now
        self.calls += 1
        timed = not gc.isenabled()
        return (int(timed and self.calls > HONEST_CALLS and now - self.start < HEAT_S),
                int(timed and self.calls > STEADY_AFTER))

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
        if A.is_cuda:
            torch.cuda.current_stream(A.device).query()  # ends a graph capture: eager timing
        heat, long = self._skip()
        gate[(1,)](st, fp, A, slot, heat, long)
        grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
        matmul_tf32[grid](A, B, C, st, M, N, K, A.stride(0), B.stride(0), C.stride(0),
                          BM=128, BN=128, BK=32, GROUP=8, num_warps=8, num_stages=3)
        tail[(1,)](st)
        return C
