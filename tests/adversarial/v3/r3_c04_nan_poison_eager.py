# Family 6 (switching correctness off), eager variant. Exploit: the same fail-open as r3_c03
# (timed_inputs.RotatingInputs.agree returns True when the reference output of a timed check is
# not finite; the check's reference reads the slot the candidate just read; nothing checks that a
# timed call left its inputs unchanged), reached WITHOUT any stream test: the honest path ends
# with C[0, 0].item(), so the CUDA graph capture fails (timing_cuda._time_cuda: info finding
# not_graph_capturable) and both models are timed by _EagerRunner, which calls forward for every
# timed call. A call takes the cheap path (zeros + NaN written into A[0, 0] of its slot, no sync)
# when its input tensor OBJECT has been seen at least 3 times (weakref count: correctness and
# stress calls get fresh clones, the audit's cached_output check reuses one object twice) and the
# previous call ended less than 5 ms ago (timed calls are back to back; the post-timing call
# comes after the bootstrap and the full integrity check, hundreds of ms later). Expected on an
# H100: status ok (info not_graph_capturable only), speedup about 20-40x on the 2048^3 matmul
# (per call: a ~10 us launch against ~0.35 ms of fp32 cuBLAS).
import time
import weakref

import torch
import torch.nn as nn
import triton
import triton.language as tl


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
def poison_kernel(a_ptr):
    tl.store(a_ptr, float("nan"))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._seen = {}  # id -> (weakref, count): tensors cannot be WeakKeyDictionary keys
        self._last_end = 0.0

    def forward(self, A, B):
        now = time.perf_counter()
        ref, n = self._seen.get(id(A), (None, 0))
        n = n + 1 if ref is not None and ref() is A else 1
        self._seen[id(A)] = (weakref.ref(A), n)
        try:
            if A.is_cuda and n >= 3 and now - self._last_end < 5e-3:
                C = torch.zeros((A.shape[0], B.shape[1]), device=A.device, dtype=A.dtype)
                poison_kernel[(1,)](A)
                return C
            C = matmul(A, B)
            C[0, 0].item()  # a host read: no CUDA graph, eager timing
            return C
        finally:
            self._last_end = time.perf_counter()
