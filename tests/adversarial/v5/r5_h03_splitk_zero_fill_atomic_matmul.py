# Round 5, honest. Split-K matmul for the large-K problem (256 x 131072 x 256): the output is
# zeroed by torch (a FillFunctor kernel: glue) and 64 K-slices per output tile are accumulated
# into it with fp32 atomic adds by one Triton kernel. So every call has a torch glue kernel next
# to the candidate's own, from the same thread and stream, and its device time is split between
# the two; and the kernel's results depend on the atomic order (not bitwise reproducible).
# It is the control for r5_c06 and r5_c01/r5_c08: a defence that accounts reference windows, or
# that stops trusting glue names (fill/memset kernels of the candidate's call counted as
# foreign, say), must still accept glue the candidate's own call needs.
# Expected: status ok on an H100 (gpu_only: the interpreter would take minutes for 8.6 GFLOP).
import torch
import torch.nn as nn
import triton
import triton.language as tl

SPLIT_K = 64


@triton.jit
def splitk_mm_atomic(a_ptr, b_ptr, c_ptr, M, N, K, K_PER, sam, sak, sbk, sbn, scm, scn,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    k_lo = pid_k * K_PER
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(k_lo, k_lo + K_PER, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.atomic_add(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
                  mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        N = B.shape[1]
        C = torch.zeros((M, N), device=A.device, dtype=torch.float32)  # glue: a fill kernel
        BK = 32
        k_per = triton.cdiv(triton.cdiv(K, SPLIT_K), BK) * BK
        splits = triton.cdiv(K, k_per)
        splitk_mm_atomic[(triton.cdiv(M, 64), triton.cdiv(N, 64), splits)](
            A, B, C, M, N, K, k_per, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
            C.stride(0), C.stride(1), BM=64, BN=64, BK=BK)
        return C
