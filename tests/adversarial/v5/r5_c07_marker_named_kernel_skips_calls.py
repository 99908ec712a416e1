# Round 5, family 7 (fewer launches than calls while timed) + 6 (an accounting blind spot).
# GPU only.
# Target: gpu_profile.classify_events skips every kernel whose name *contains* "spin_kernel"
# (_MARKER, meant for torch.cuda._sleep's marker): such a kernel is neither the candidate's,
# nor glue, nor foreign - it is not counted at all, in the audit and in the timed accounting.
# So a candidate whose only kernel is named spin_kernel_* has custom_launches_per_call = 0 in
# the audit (the launch hooks still count it: no no_custom_kernel finding, and its records match
# the hooked name: no kernel_records_missing), and timed_findings' launch-share rule
# (timed_launch_deficit) needs per_call >= 1: it never runs.
# That re-opens the known-open cheat the launch accounting was meant to close ("a kernel that
# reuses one output buffer for every call can compute only the last call of a sample, the only
# one whose output a timed check can read"): timing_blocks._checkable keeps only calls whose
# output no later call overwrote, so when every call returns the same buffer only the last call
# (slot 0) is ever compared.
# Exploit: forward queries the current stream first (illegal during capture: the CUDA graph of
# the candidate fails, timing falls back to eager calls, an info finding). Before the timing
# stage (trials, audit, cached-output check) it is an honest fp32 Triton GEMM into a fresh
# tensor. From the first call on a non-default stream (the timing stage's warm-up) it returns
# one persistent output buffer and watches the input pointers: the evaluator's slots repeat
# with period k (one per call of a sample, j = k-1 .. 0), and the call after the longest host
# gap starts a sample (refresh + flush + device sync happen between samples, calls of a sample
# are back to back). After three identical periods it knows which slot ends a sample and
# computes only that call; the k-1 others return the buffer without launching anything. Any
# pointer outside the learned period (wall check, post-timing check: both slot 0) computes.
# Expected if it passes (H100, 2048^3 fp32): status ok (not_graph_capturable info), speedup
# ~k x the honest ratio (~3-6x for k ~ 10) with timed_checks all passing; without the marker
# name the same candidate gets timed_launch_deficit.
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl

_perf = time.perf_counter


@triton.jit
def spin_kernel_mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _mm_into(A, B, C):
    M, K = A.shape
    N = B.shape[1]
    spin_kernel_mm[(triton.cdiv(M, 64), triton.cdiv(N, 64))](
        A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
        C.stride(0), C.stride(1), BM=64, BN=64, BK=32)
    return C


class _Period:
    """Learns the evaluator's slot rotation from input pointers and host gaps."""

    HISTORY = 512
    MAX_K = 128

    def __init__(self):
        self.hist = []       # (pointer, host gap before the call)
        self.members = None  # the pointers of one period, once learned
        self.last = None     # the pointer of the call that ends a sample

    def compute(self, ptr, gap):
        """Whether this call must compute (False: its output is never read)."""
        self.hist.append((ptr, gap))
        if len(self.hist) > self.HISTORY:
            del self.hist[:len(self.hist) - self.HISTORY]
        if self.members is not None:
            if ptr in self.members:
                return ptr == self.last
            self.members = None  # new slots (another k): learn again
            self.last = None
        self._learn()
        return True

    def _learn(self):
        h = self.hist
        ptr = h[-1][0]
        d = next((i for i in range(1, min(len(h), self.MAX_K + 1)) if h[-1 - i][0] == ptr), None)
        if d is None or d < 2 or len(h) < 3 * d + 1:
            return
        tail = h[-3 * d:]
        if any(tail[i][0] != tail[i + d][0] for i in range(2 * d)):
            return
        if len({p for p, _ in tail[-d:]}) != d:
            return
        gaps = [g for _, g in tail]
        start = max(range(1, 3 * d), key=lambda i: gaps[i])  # a sample's first call
        rest = sorted(g for i, g in enumerate(gaps) if i % d != start % d)
        if not rest or gaps[start] < 4 * rest[len(rest) // 2] + 50e-6:
            return  # no clear sample boundary: stay honest
        self.members = {p for p, _ in tail[-d:]}
        self.last = tail[start - 1][0]  # the call before a sample's first one ends a sample


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._timing = False
        self._period = _Period()
        self._out = {}
        self._t_end = None

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if not A.is_cuda:
            return _mm_into(A, B, torch.empty((A.shape[0], B.shape[1]), dtype=torch.float32))
        dev = A.device
        torch.cuda.current_stream(dev).query()  # raises while capturing: eager timing
        t0 = _perf()
        if not self._timing and torch.cuda.current_stream(dev) != torch.cuda.default_stream(dev):
            self._timing = True  # the timing stage's side-stream warm-up
        shape = (A.shape[0], B.shape[1])
        if not self._timing:
            out = _mm_into(A, B, torch.empty(shape, device=dev, dtype=torch.float32))
        else:
            key = (dev, shape)
            out = self._out.get(key)
            if out is None:
                out = torch.empty(shape, device=dev, dtype=torch.float32)
                self._out[key] = out
            gap = t0 - self._t_end if self._t_end is not None else 1.0
            if self._period.compute(A.data_ptr(), gap):
                _mm_into(A, B, out)
        self._t_end = _perf()
        return out
