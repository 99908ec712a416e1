# Seed for 3_RoPE.py: liger-kernel's RoPE kernel, launched as rope_forward launches it (one
# program per token, all heads of the token in one tile). liger rotates q and k in place; the
# evaluator forbids changing the inputs, and copying them first would put half the device time
# in torch's copy kernels (the audit rejects that as glue compute). So the one change to
# upstream: the kernel stores into separate output tensors (q_out_ptr, k_out_ptr, same layout
# as q and k) instead of back into q and k (the problem rotates the whole head_dim, so every
# output element is stored).
# The kernel below is otherwise liger-kernel 0.8.5's, from liger_kernel/ops/rope.py:
# Copyright 2024 LinkedIn Corporation, BSD 2-Clause License (suites/liger/LICENSE.liger-kernel).
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
NUM_WARPS = 2  # ks:tune NUM_WARPS=[1, 2, 4, 8]


@triton.jit
def _triton_rope(
    q_ptr,
    q_row_stride,
    k_ptr,
    k_row_stride,
    q_out_ptr,
    k_out_ptr,
    cos,
    cos_row_stride,
    sin,
    sin_row_stride,
    sl,
    bs: tl.constexpr,
    cos_bs: tl.constexpr,
    n_qh: tl.constexpr,
    n_kh: tl.constexpr,
    hd: tl.constexpr,
    pad_n_qh: tl.constexpr,
    pad_n_kh: tl.constexpr,
    pad_hd: tl.constexpr,
    pad_rd: tl.constexpr,
    rd: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    BACKWARD_PASS: tl.constexpr = False,
):
    # q size: (bsz, seq_len, num_q_heads, head_dim)
    # q stride: (seq_len * num_q_heads * head_dim, num_q_heads * head_dim, head_dim, 1)
    # k size: (bsz, seq_len, num_kv_heads, head_dim)
    # k stride: (seq_len * num_kv_heads * head_dim, num_kv_heads * head_dim, head_dim, 1)

    # cos size: (1, seq_len, rotary_dim) or (bsz, seq_len, rotary_dim)
    # stride: (seq_len * rotary_dim, rotary_dim, 1)
    pid = tl.program_id(0).to(tl.int64)

    # locate start address
    q_ptr = q_ptr + pid * q_row_stride
    k_ptr = k_ptr + pid * k_row_stride
    q_out_ptr = q_out_ptr + pid * q_row_stride
    k_out_ptr = k_out_ptr + pid * k_row_stride

    # ####################################################################
    # get the cos(mθ_{i...d/2}) and sin(mθ_{i...d/2}) for token position
    # m of this program instance
    # ####################################################################

    # 1. program instances are laid out in a 1D vector of size bsz * seq_len, which
    # effectively represents a 2D grid of size [bsz, seq_len] with seq_len dimension
    # being the fastest changing dimension. Thus we can simply do pid // sl to get the batch index
    # and pid % sl to get the sequence index.
    # 2. We only need the left half of cos and sin matrix because the right half is just
    # a clone of the left half.
    batch_idx = pid // sl
    cos_row_idx = pid % sl
    cos = cos + tl.where(
        cos_bs == 1,
        cos_row_idx * cos_row_stride,
        batch_idx * (sl * cos_row_stride) + cos_row_idx * cos_row_stride,
    )
    sin = sin + tl.where(
        cos_bs == 1,
        cos_row_idx * sin_row_stride,
        batch_idx * (sl * sin_row_stride) + cos_row_idx * sin_row_stride,
    )

    cos_offsets = tl.arange(0, pad_rd // 2)
    cos_mask = cos_offsets < rd // 2
    cos_row = tl.load(cos + cos_offsets, mask=cos_mask, other=0)
    sin_row = tl.load(sin + cos_offsets, mask=cos_mask, other=0)

    # ####################################################################
    # Load the left and right half of the rotary portion of q and k for
    # the current program instance (i.e. for the current token) separately.
    # For partial RoPE (rd < hd), the non-rotary portion [rd:hd] remains
    # untouched in-place.
    # ####################################################################
    # left half of the rotary portion
    first_half_q_offsets = tl.arange(0, pad_n_qh)[:, None] * hd + tl.arange(0, pad_rd // 2)[None, :]
    first_half_k_offsets = tl.arange(0, pad_n_kh)[:, None] * hd + tl.arange(0, pad_rd // 2)[None, :]
    first_q_mask = (tl.arange(0, pad_n_qh)[:, None] < n_qh) & (tl.arange(0, pad_rd // 2)[None, :] < rd // 2)
    first_k_mask = (tl.arange(0, pad_n_kh)[:, None] < n_kh) & (tl.arange(0, pad_rd // 2)[None, :] < rd // 2)
    q_tile_1 = tl.load(q_ptr + first_half_q_offsets, mask=first_q_mask, other=0).to(sin_row.dtype)
    k_tile_1 = tl.load(k_ptr + first_half_k_offsets, mask=first_k_mask, other=0).to(sin_row.dtype)

    # right half of the rotary portion
    second_half_q_offsets = first_half_q_offsets + (rd // 2)
    second_half_k_offsets = first_half_k_offsets + (rd // 2)
    second_q_mask = first_q_mask
    second_k_mask = first_k_mask
    q_tile_2 = tl.load(q_ptr + second_half_q_offsets, mask=second_q_mask, other=0).to(sin_row.dtype)
    k_tile_2 = tl.load(k_ptr + second_half_k_offsets, mask=second_k_mask, other=0).to(sin_row.dtype)

    if not BACKWARD_PASS:
        # y = [x1, x2] * [cos, cos] + [-x2, x1] * [sin, sin]
        new_q_tile_1 = q_tile_1 * cos_row - q_tile_2 * sin_row
        tl.store(q_out_ptr + first_half_q_offsets, new_q_tile_1, mask=first_q_mask)
        new_q_tile_2 = q_tile_2 * cos_row + q_tile_1 * sin_row
        tl.store(q_out_ptr + second_half_q_offsets, new_q_tile_2, mask=second_q_mask)

        new_k_tile_1 = k_tile_1 * cos_row - k_tile_2 * sin_row
        tl.store(k_out_ptr + first_half_k_offsets, new_k_tile_1, mask=first_k_mask)
        new_k_tile_2 = k_tile_2 * cos_row + k_tile_1 * sin_row
        tl.store(k_out_ptr + second_half_k_offsets, new_k_tile_2, mask=second_k_mask)
    else:
        # with some math, we can get:
        # dy = [dx1, dx2] * [cos, cos] + [-dx2, dx1] * [-sin, -sin]
        new_q_tile_1 = q_tile_1 * cos_row + q_tile_2 * sin_row
        tl.store(q_out_ptr + first_half_q_offsets, new_q_tile_1, mask=first_q_mask)
        new_q_tile_2 = q_tile_2 * cos_row - q_tile_1 * sin_row
        tl.store(q_out_ptr + second_half_q_offsets, new_q_tile_2, mask=second_q_mask)

        new_k_tile_1 = k_tile_1 * cos_row + k_tile_2 * sin_row
        tl.store(k_out_ptr + first_half_k_offsets, new_k_tile_1, mask=first_k_mask)
        new_k_tile_2 = k_tile_2 * cos_row - k_tile_1 * sin_row
        tl.store(k_out_ptr + second_half_k_offsets, new_k_tile_2, mask=second_k_mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, cos, sin):
        q = q.transpose(1, 2).contiguous()  # no copy in the layout a q/k projection gives
        k = k.transpose(1, 2).contiguous()
        q_out, k_out = torch.empty_like(q), torch.empty_like(k)
        batch_size, seq_len, n_q_head, head_dim = q.shape
        n_kv_head = k.shape[2]
        rotary_dim = min(cos.shape[-1], head_dim)
        cos = cos.contiguous()
        sin = sin.contiguous()
        pad_n_q_head = triton.next_power_of_2(n_q_head)
        pad_n_kv_head = triton.next_power_of_2(n_kv_head)
        _triton_rope[(batch_size * seq_len,)](
            q, q.stride(1), k, k.stride(1), q_out, k_out, cos, cos.stride(-2), sin,
            sin.stride(-2), seq_len,
            batch_size, cos.shape[0], n_q_head, n_kv_head, head_dim, pad_n_q_head, pad_n_kv_head,
            triton.next_power_of_2(head_dim), triton.next_power_of_2(rotary_dim), rotary_dim,
            BLOCK_SIZE=max(pad_n_q_head, pad_n_kv_head), BACKWARD_PASS=False,
            num_warps=NUM_WARPS)
        return q_out.transpose(1, 2), k_out.transpose(1, 2)
# EVOLVE-BLOCK-END
