# Honest: a correct Triton matmul whose forward also reads a value on the host (a NaN guard:
# C[0, 0].item()) every call. Such a forward cannot be captured in a CUDA graph, so it is timed
# with eager calls (info not_graph_capturable) - the same path r3_c04/c06/c08/c09/c10 force. It
# computes every call, from its own inputs, and must be accepted (ok).
import math

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


class ModelNew(nn.Module):
    def forward(self, A, B):
        C = matmul(A, B)
        if math.isnan(C[0, 0].item()):
            raise RuntimeError("NaN in the product")
        return C
