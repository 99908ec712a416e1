# r1a honest, must stay accepted (GPU only: autotune over num_stages/num_warps). Unusual but
# legitimate: per-shape dispatch in forward - small problems get a plain tiled kernel, large
# ones a persistent, grouped-ordering, @triton.autotune'd kernel with one program per SM that
# walks its tiles in a loop; the SM count is read once in __init__. TF32 tl.dot (outputs of
# U(0,1) products are ~512, far inside the tolerance).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tiled_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.autotune(
    configs=[triton.Config({"BM": 128, "BN": 128, "BK": 32, "GROUP": 8}, num_stages=3, num_warps=8),
             triton.Config({"BM": 128, "BN": 64, "BK": 32, "GROUP": 8}, num_stages=4, num_warps=4)],
    key=["M", "N", "K"])
@triton.jit
def persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, NUM_SMS: tl.constexpr, BM: tl.constexpr,
                      BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    total = tiles_m * tiles_n
    per_group = GROUP * tiles_n
    for tile in range(pid, total, NUM_SMS):
        group = tile // per_group
        first_m = group * GROUP
        size_m = min(tiles_m - first_m, GROUP)
        tm = first_m + (tile % per_group) % size_m
        tn = (tile % per_group) // size_m
        rm = tm * BM + tl.arange(0, BM)
        rn = tn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                        mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                        mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_sms = (torch.cuda.get_device_properties(0).multi_processor_count
                        if torch.cuda.is_available() else 4)

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty(M, N, dtype=A.dtype, device=A.device)
        if M * N < 512 * 512:
            tiled_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 64))](A, B, C, M, N, K,
                                                                   BM=64, BN=64, BK=32)
        else:
            persistent_kernel[(self.num_sms,)](A, B, C, M, N, K, NUM_SMS=self.num_sms)
        return C
