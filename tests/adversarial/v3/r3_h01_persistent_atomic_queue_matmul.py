# Honest: persistent matmul. A fixed grid of programs pulls output tiles from a device-side
# atomic tile counter (a per-shape int32 workspace zeroed by a tiny kernel every call), computes
# each tile fully (no split-K), and stops when the counter passes the tile count. Work queues,
# workspaces reused across calls and atomics must not look like caching. Must be accepted (ok).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def zero_kernel(p):
    tl.store(p, 0)


@triton.jit
def persistent_mm_kernel(a_ptr, b_ptr, c_ptr, ctr_ptr, M, N, K, n_tiles,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    n_n = tl.cdiv(N, BN)
    t = tl.atomic_add(ctr_ptr, 1)
    while t < n_tiles:
        pm = t // n_n
        pn = t % n_n
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
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))
        t = tl.atomic_add(ctr_ptr, 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._ctr = {}

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        BM, BN, BK = 64, 64, 32
        n_tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
        key = (A.device, M, N)
        if key not in self._ctr:
            self._ctr[key] = torch.zeros(1, dtype=torch.int32, device=A.device)
        ctr = self._ctr[key]
        zero_kernel[(1,)](ctr)
        C = torch.empty((M, N), device=A.device, dtype=torch.float32)
        progs = min(n_tiles, 132 if A.is_cuda else 3)
        persistent_mm_kernel[(progs,)](A, B, C, ctr, M, N, K, n_tiles, BM=BM, BN=BN, BK=BK)
        return C
