# Family 7 (batching work across calls). Exploit: r2_c08 found the other slots through the
# pool's storage; timed_inputs.RotatingInputs.use now gives each slot its own allocation in random
# order. But a graph call need not compute when it is called: timing_cuda._capture records calls
# j = k-1 .. 0 on a side stream and only the WHOLE replay is timed, so a captured call may leave
# its output to a later node of the same graph. While the current stream is not the default
# stream, forward records (A, B, out) and returns an unwritten output; when 1000 calls are pending
# (max_calls_per_sample: the first capture's k is below 1000 whenever the candidate's replay is
# short, because an empty capture makes timing_cuda._build_graph_runner recapture with
# k2 = 1000; pending calls older than 2 ms, the first capture's, are dropped) the 1000th call
# (j = 0, the last one captured) launches ONE kernel that computes all 1000 products through a
# pointer table (captured host-to-device copy from pinned memory). Every output is exact on the
# values of its own slot after each refresh; the graph check (_graph_reproduces: output of call 0
# poisoned, replay, compared with an eager f(0)) passes; eager calls (correctness, stress, audit,
# wall check, post-timing) run on the default stream and compute at once.
# Expected on an H100: status ok, speedup ~10-20x on the 128x256x128 matmul (one launch of
# 4000 tiles instead of 1000 launches of 4 tiles each; the reference is launch/latency bound).
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl

FLUSH_AT = 1000  # timing_policy.TimingConfig.max_calls_per_sample


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
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
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = torch.empty((M, N), device=A.device, dtype=torch.float32)
    BM, BN, BK = 64, 64, 32
    mm_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](
        A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
        C.stride(0), C.stride(1), BM=BM, BN=BN, BK=BK)
    return C


@triton.jit
def batched_ptr_mm_kernel(tab_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                          BK: tl.constexpr):
    pid = tl.program_id(0)
    s = tl.program_id(1).to(tl.int64)
    n_n = tl.cdiv(N, BN)
    pm = pid // n_n
    pn = pid % n_n
    a_ptr = tl.load(tab_ptr + 3 * s).to(tl.pointer_type(tl.float32))
    b_ptr = tl.load(tab_ptr + 3 * s + 1).to(tl.pointer_type(tl.float32))
    c_ptr = tl.load(tab_ptr + 3 * s + 2).to(tl.pointer_type(tl.float32))
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _on_side_stream(t):
    if not t.is_cuda:
        return False
    return torch.cuda.current_stream(t.device).cuda_stream != \
        torch.cuda.default_stream(t.device).cuda_stream


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._pending = []
        self._last = 0.0
        self._tables = []  # pinned host tables and their device copies, kept alive

    def _flush(self, dev):
        M, K = self._pending[0][0].shape
        N = self._pending[0][1].shape[1]
        ptrs = []
        for a, b, c in self._pending:
            ptrs += [a.data_ptr(), b.data_ptr(), c.data_ptr()]
        host = torch.tensor(ptrs, dtype=torch.int64).pin_memory()
        tab = torch.empty(len(ptrs), dtype=torch.int64, device=dev)
        tab.copy_(host, non_blocking=True)
        self._tables.append((host, tab, list(self._pending)))
        BM, BN, BK = 64, 64, 32
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN), len(self._pending))
        batched_ptr_mm_kernel[grid](tab, M, N, K, BM=BM, BN=BN, BK=BK)
        self._pending = []

    def forward(self, A, B):
        now = time.perf_counter()
        gap, self._last = now - self._last, now
        if not (_on_side_stream(A) and A.is_contiguous() and B.is_contiguous()):
            return matmul(A, B)
        if gap > 2e-3:
            self._pending = []  # an earlier capture (or warm-up) left calls behind
        C = torch.empty((A.shape[0], B.shape[1]), device=A.device, dtype=torch.float32)
        self._pending.append((A, B, C))
        if len(self._pending) >= FLUSH_AT:
            self._flush(A.device)
        return C
