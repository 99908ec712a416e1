# Honest (unusual): C = sqrt(A) @ B on the large-K problem whose stress trials are skipped
# (the reference is NaN off-distribution): sqrt fused into the A-tile load, split-K partial
# products accumulated with fp32 atomics into a zeroed output. Must stay accepted by a fix for
# r2_c05 (e.g. stress draws that respect the reference's domain, or |x| redraws).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sqrt_matmul_splitk_kernel(a_ptr, b_ptr, c_ptr, M, N, K, K_PER, BM: tl.constexpr,
                              BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    k_start = tl.program_id(2) * K_PER
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(k_start, k_start + K_PER, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None].to(tl.int64) * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(tl.sqrt(a), b, acc)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc,
                  mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.zeros(M, N, dtype=A.dtype, device=A.device)
        split = 16
        k_per = triton.cdiv(triton.cdiv(K, split), 128) * 128
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64), triton.cdiv(K, k_per))
        sqrt_matmul_splitk_kernel[grid](A, B, C, M, N, K, k_per, BM=64, BN=64, BK=128)
        return C
