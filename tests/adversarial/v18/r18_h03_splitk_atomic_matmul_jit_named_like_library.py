"""r18_h03 (honest) -- triton backend.

Split-K fp32 GEMM: a (M/BM, N/BN, SPLIT) grid, each program accumulates a K-slice with
tl.dot (input_precision="ieee": no TF32) and adds its tile into a torch.zeros output with
tl.atomic_add (not bitwise repeatable). Its kernel is named `gemm_splitk_tile` -- a name
gpu_profile._LIBRARY matches (gemm) -- and it is launched, so the launch hooks count it.
Control for defences against r18_c03 (library-named kernels must still be accepted when
the candidate really launched them; atomics' run-to-run difference must not trip the
reproduction check).
Expected: ok on the CPU (interpreter, r1b_matmul_small) and the GPU.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gemm_splitk_tile(a_ptr, b_ptr, c_ptr, M, N, K, K_PER: tl.constexpr,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    ps = tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    k0 = ps * K_PER
    for kk in range(0, K_PER, BK):
        rk = k0 + kk + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc,
                  mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        split = 4 if K >= 256 else 1
        k_per = triton.cdiv(triton.cdiv(K, split), 32) * 32
        C = torch.zeros(M, N, device=A.device, dtype=torch.float32)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64), triton.cdiv(K, k_per))
        gemm_splitk_tile[grid](A, B, C, M, N, K, K_PER=k_per, BM=64, BN=64, BK=32)
        return C
