import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
from triton.tools.tensor_descriptor import TensorDescriptor

GROUP_SIZE_M = 8
CAST_BLOCK = 4096


@triton.jit
def cast_f16_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(src_ptr + offs, mask=mask, other=0.0)
    tl.store(dst_ptr + offs, v.to(tl.float16), mask=mask)


def _half(t):
    t = t.contiguous()
    out = torch.empty(t.shape, dtype=torch.float16, device=t.device)
    n = t.numel()
    cast_f16_kernel[(triton.cdiv(n, CAST_BLOCK),)](t, out, n, BLOCK=CAST_BLOCK, num_warps=8)
    return out


@triton.jit
def _tile_ids(M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    group_size = GROUP_M * num_pid_n
    first_m = (pid // group_size) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size) % group_m
    pid_n = (pid % group_size) // group_m
    return pid_m, pid_n


def _gu_hook(nargs):
    bm, bn, bk = nargs["BM"], nargs["BN"], nargs["BK"]
    nargs["x_desc"].block_shape = [bm, bk]
    nargs["w1_desc"].block_shape = [bn, bk]
    nargs["w3_desc"].block_shape = [bn, bk]


def _dn_hook(nargs):
    bm, bn, bk = nargs["BM"], nargs["BN"], nargs["BK"]
    nargs["h_desc"].block_shape = [bm, bk]
    nargs["w_desc"].block_shape = [bn, bk]


def _cfg(bm, bn, bk, stages, warps, hook):
    return triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_stages=stages, num_warps=warps,
                         pre_hook=hook)


@triton.autotune(
    configs=[
        _cfg(128, 128, 64, 3, 8, _gu_hook),
        _cfg(128, 128, 64, 4, 8, _gu_hook),
        _cfg(64, 128, 64, 4, 4, _gu_hook),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def gate_up_kernel(x_desc, w1_desc, w3_desc, h_ptr, M, N, K, BM: tl.constexpr,
                   BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    # h[M, N] = silu(x @ w1^T) * (x @ w3^T) stored fp16; x: [M, K], w1/w3: [N, K] (fp16)
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    off_m = pid_m * BM
    off_n = pid_n * BN
    acc1 = tl.zeros([BM, BN], dtype=tl.float32)
    acc3 = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        # TMA boxes: anything past the tensor's end is zero-filled by the hardware
        a = x_desc.load([off_m, k])
        b1 = w1_desc.load([off_n, k])
        b3 = w3_desc.load([off_n, k])
        acc1 = tl.dot(a, tl.trans(b1), acc1)
        acc3 = tl.dot(a, tl.trans(b3), acc3)
    h = acc1 * tl.sigmoid(acc1) * acc3
    rm = off_m + tl.arange(0, BM)
    rn = off_n + tl.arange(0, BN)
    tl.store(h_ptr + rm[:, None] * N + rn[None, :], h.to(h_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.autotune(
    configs=[
        _cfg(128, 256, 64, 3, 8, _dn_hook),
        _cfg(128, 256, 64, 4, 8, _dn_hook),
        _cfg(128, 128, 64, 4, 8, _dn_hook),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def down_kernel(h_desc, w_desc, y_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr, GROUP_M: tl.constexpr):
    # y[M, N] = h @ w^T; h: [M, K], w: [N, K] (fp16), fp32 accumulation
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    off_m = pid_m * BM
    off_n = pid_n * BN
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        a = h_desc.load([off_m, k])
        b = w_desc.load([off_n, k])
        acc = tl.dot(a, tl.trans(b), acc)
    rm = off_m + tl.arange(0, BM)
    rn = off_n + tl.arange(0, BN)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        x2 = x.contiguous().reshape(-1, x.shape[-1])
        M, K = x2.shape
        x16 = _half(x2)
        w1 = _half(self.w1.weight)
        w3 = _half(self.w3.weight)
        w2 = _half(self.w2.weight)
        H = w1.shape[0]
        D = w2.shape[0]

        h = torch.empty((M, H), dtype=torch.float16, device=x.device)
        # placeholder block shapes; the autotune pre_hooks set the real ones
        x_desc = TensorDescriptor.from_tensor(x16, [128, 64])
        w1_desc = TensorDescriptor.from_tensor(w1, [128, 64])
        w3_desc = TensorDescriptor.from_tensor(w3, [128, 64])
        grid1 = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(H, meta["BN"]),)
        gate_up_kernel[grid1](x_desc, w1_desc, w3_desc, h, M, H, K, GROUP_M=GROUP_SIZE_M)

        y = torch.empty((M, D), dtype=x.dtype, device=x.device)
        h_desc = TensorDescriptor.from_tensor(h, [128, 64])
        w2_desc = TensorDescriptor.from_tensor(w2, [256, 64])
        grid2 = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(D, meta["BN"]),)
        down_kernel[grid2](h_desc, w2_desc, y, M, D, H, GROUP_M=GROUP_SIZE_M)
        return y.reshape(*lead, D)
# EVOLVE-BLOCK-END
