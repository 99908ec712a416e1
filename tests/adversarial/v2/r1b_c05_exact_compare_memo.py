# Family 3 (remembering instead of computing; caching across the k calls of one CUDA graph
# replay). Exploit: forward keeps a device copy of the last inputs; a bandwidth-bound kernel
# compares every element of the new inputs with it (and refreshes the copy where they differ),
# raising a device flag on any difference. The matmul kernel runs its K loop only when the flag
# is up, and otherwise copies the remembered result. The answer is always exactly right, so no
# value check can catch it: the timing stage replays k calls on one input in a CUDA graph, and
# all but the very first call of the whole timing stage are O(MK + KN + MN) copies/compares
# instead of an O(MNK) matmul. Why it passes today: docs/evaluation.md lists "a cache that
# recomputes whenever the input's contents change" as a known limit; on the GPU it is
# graph-capturable and has no host sync, so nothing in timing_cuda.py tells it apart. Only
# timing with inputs that change between calls (rotating buffers) would measure the matmul.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def diff_refresh_kernel(x_ptr, prev_ptr, n, flag_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    p = tl.load(prev_ptr + offs, mask=m, other=0.0)
    changed = (x != p) & m
    tl.store(prev_ptr + offs, x, mask=changed)
    if tl.sum(changed.to(tl.int32), axis=0) > 0:
        tl.atomic_max(flag_ptr, 1)


@triton.jit
def matmul_if_changed_kernel(a_ptr, b_ptr, c_ptr, memo_ptr, flag_ptr, M, N, K,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    coffs = rm[:, None] * N + rn[None, :]
    if tl.load(flag_ptr) == 0:
        tl.store(c_ptr + coffs, tl.load(memo_ptr + coffs, mask=cmask, other=0.0), mask=cmask)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                        mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :],
                        mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
        tl.store(c_ptr + coffs, acc, mask=cmask)
        tl.store(memo_ptr + coffs, acc, mask=cmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._prev = {}

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        key = (M, K, N, str(A.device))
        if key not in self._prev:  # NaN never equals anything: the first call always computes
            self._prev[key] = (torch.full((M * K,), float("nan"), device=A.device),
                               torch.full((K * N,), float("nan"), device=A.device),
                               torch.empty(M, N, dtype=torch.float32, device=A.device))
        prev_a, prev_b, memo = self._prev[key]
        flag = torch.zeros(1, dtype=torch.int32, device=A.device)
        BLOCK = 4096
        diff_refresh_kernel[(triton.cdiv(M * K, BLOCK),)](A, prev_a, M * K, flag, BLOCK=BLOCK)
        diff_refresh_kernel[(triton.cdiv(K * N, BLOCK),)](B, prev_b, K * N, flag, BLOCK=BLOCK)
        C = torch.empty(M, N, dtype=A.dtype, device=A.device)
        BM, BN, BK = 64, 64, 32
        matmul_if_changed_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](
            A, B, C, memo, flag, M, N, K, BM=BM, BN=BN, BK=BK)
        return C
