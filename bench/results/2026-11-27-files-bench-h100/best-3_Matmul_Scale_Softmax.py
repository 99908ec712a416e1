import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
MM_BLOCK_M = 128
MM_BLOCK_N = 256
MM_BLOCK_K = 64
MM_GROUP_M = 8
MM_WARPS = 8
MM_STAGES = 3
CAST_BLOCK = 4096
CAST_WARPS = 8
NORM_ELEMS = 4096      # elements per normalise step (NORM_ELEMS // MM_BLOCK_N tiles)
NORM_WARPS = 8


@triton.jit
def cast2_f16_kernel(a_ptr, a16_ptr, n_a, b_ptr, b16_ptr, n_b, nblk_a, BLOCK: tl.constexpr):
    # both fp32 -> fp16 operand copies in one launch: programs [0, nblk_a) cast A, the rest B
    pid = tl.program_id(0)
    ar = tl.arange(0, BLOCK)
    if pid < nblk_a:
        offs = pid.to(tl.int64) * BLOCK + ar
        mask = offs < n_a
        x = tl.load(a_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first")
        tl.store(a16_ptr + offs, x.to(tl.float16), mask=mask)
    else:
        offs = (pid - nblk_a).to(tl.int64) * BLOCK + ar
        mask = offs < n_b
        x = tl.load(b_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first")
        tl.store(b16_ptr + offs, x.to(tl.float16), mask=mask)


@triton.jit
def matmul_scale_expstats_kernel(a_ptr, b_ptr, e_ptr, mx_ptr, sm_ptr, M, N, K,
                                 stride_am, stride_ak, stride_bk, stride_bn,
                                 stride_em, scale, NT,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # s = (A @ B) * scale (fp16 operands, fp32 accumulation); stores
    # e = exp(s - tile_max) as fp16 plus per-(row, N-tile) max and sum
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_rem), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_rem) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=tl.float32)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    acc = acc * scale
    # tile-relative exponentials (columns beyond N excluded) and partial stats
    s = tl.where(mask_n[None, :], acc, -float("inf"))
    t_max = tl.max(s, axis=1)
    e = tl.exp(s - t_max[:, None])
    t_sum = tl.sum(e, axis=1)
    e_ptrs = e_ptr + offs_m[:, None].to(tl.int64) * stride_em + offs_n[None, :]
    tl.store(e_ptrs, e.to(tl.float16), mask=mask_m[:, None] & mask_n[None, :])
    st_offs = offs_m.to(tl.int64) * NT + pid_n
    tl.store(mx_ptr + st_offs, t_max, mask=mask_m)
    tl.store(sm_ptr + st_offs, t_sum, mask=mask_m)


@triton.jit
def softmax_finalize_kernel(e_ptr, mx_ptr, sm_ptr, out_ptr, N, NT, stride_em, stride_om,
                            BLOCK_N: tl.constexpr, TILES: tl.constexpr,
                            NUM_GROUPS: tl.constexpr, BLOCK_T: tl.constexpr):
    # combine the per-tile stats of one row, then out = e * exp(tile_max - g_max) / g_sum
    row = tl.program_id(0).to(tl.int64)
    t = tl.arange(0, BLOCK_T)
    tmask = t < NT
    m = tl.load(mx_ptr + row * NT + t, mask=tmask, other=-float("inf"))
    s = tl.load(sm_ptr + row * NT + t, mask=tmask, other=0.0)
    g_max = tl.max(m, axis=0)
    inv = 1.0 / tl.sum(s * tl.exp(m - g_max), axis=0)
    tt = tl.arange(0, TILES)
    j = tl.arange(0, BLOCK_N)
    e_row = e_ptr + row * stride_em
    o_row = out_ptr + row * stride_om
    for g in range(NUM_GROUPS):
        tile = g * TILES + tt
        tvalid = tile < NT
        tm = tl.load(mx_ptr + row * NT + tile, mask=tvalid, other=-float("inf"))
        f = tl.exp(tm - g_max) * inv                    # one factor per N-tile
        cols = tile[:, None] * BLOCK_N + j[None, :]
        mask = tvalid[:, None] & (cols < N)
        e = tl.load(e_row + cols, mask=mask, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
        tl.store(o_row + cols, e * f[:, None], mask=mask, eviction_policy="evict_first")


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        dev = A.device
        # fp16 operand copies (same 10-bit mantissa as TF32, 2x tensor-core rate)
        a16 = torch.empty((M, K), device=dev, dtype=torch.float16)
        b16 = torch.empty((K, N), device=dev, dtype=torch.float16)
        n_a = M * K
        n_b = K * N
        nblk_a = triton.cdiv(n_a, CAST_BLOCK)
        nblk_b = triton.cdiv(n_b, CAST_BLOCK)
        cast2_f16_kernel[(nblk_a + nblk_b,)](A, a16, n_a, B, b16, n_b, nblk_a,
                                             BLOCK=CAST_BLOCK, num_warps=CAST_WARPS)
        # fp16 tile-relative exponentials (half the bytes of fp32 logits)
        e = torch.empty((M, N), device=dev, dtype=torch.float16)
        nt = triton.cdiv(N, MM_BLOCK_N)
        mx = torch.empty((M, nt), device=dev, dtype=torch.float32)
        sm = torch.empty((M, nt), device=dev, dtype=torch.float32)
        grid = (triton.cdiv(M, MM_BLOCK_M) * nt,)
        matmul_scale_expstats_kernel[grid](
            a16, b16, e, mx, sm, M, N, K,
            a16.stride(0), a16.stride(1), b16.stride(0), b16.stride(1),
            e.stride(0), float(self.scale), nt,
            BLOCK_M=MM_BLOCK_M, BLOCK_N=MM_BLOCK_N, BLOCK_K=MM_BLOCK_K, GROUP_M=MM_GROUP_M,
            num_warps=MM_WARPS, num_stages=MM_STAGES)
        out = torch.empty((M, N), device=dev, dtype=torch.float32)
        tiles = min(max(1, NORM_ELEMS // MM_BLOCK_N), triton.next_power_of_2(nt))
        softmax_finalize_kernel[(M,)](
            e, mx, sm, out, N, nt, e.stride(0), out.stride(0),
            BLOCK_N=MM_BLOCK_N, TILES=tiles, NUM_GROUPS=triton.cdiv(nt, tiles),
            BLOCK_T=max(2, triton.next_power_of_2(nt)), num_warps=NORM_WARPS)
        return out
# EVOLVE-BLOCK-END
