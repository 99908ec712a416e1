# Family 2 (knowing when it is timed). Exploit: the timed calls read evaluator-owned input
# slots that are views pool[j] of one pool tensor, so every call except the one reading slot 0
# sees inputs with storage_offset() != 0. Only the sample's last call (slot 0) produces the
# output the evaluator ever looks at: the timed checks compare runner.outputs["cand"] (the
# graph's / eager runner's last output), the graph check poisons and compares that same output,
# the wall check and the post-timing check call f(0) / rot.args(0) (slot 0, offset 0), and
# correctness, stress, audit and cached-output calls all get fresh clones (offset 0). So forward
# returns an uninitialised torch.empty for offset != 0 inputs and computes honestly otherwise:
# a sample of k calls costs one matmul. Why it passes: no torch compute op (empty is alloc), one
# own Triton kernel per sample in the profiled timed sample, every checked output correct, no
# introspection (storage_offset is an ordinary tensor property). Speedup inflated ~k-fold.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty(M, N, dtype=A.dtype, device=A.device)
        if A.storage_offset() != 0 or B.storage_offset() != 0:
            return C  # a timed call other than the sample's last: nobody reads this output
        A, B = A.contiguous(), B.contiguous()
        BM, BN, BK = (64, 64, 32)
        matmul_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](A, B, C, M, N, K,
                                                                BM=BM, BN=BN, BK=BK)
        return C
