# Seed for 2_SwiGLU.py: liger-kernel's SwiGLU forward, launched as swiglu_forward launches it
# on an H100 (one program per row, BLOCK_SIZE = next power of 2 of the width, num_warps from
# calculate_settings: 16 for 14336).
# The kernel below is liger-kernel 0.8.5's, copied verbatim from liger_kernel/ops/swiglu.py:
# Copyright 2024 LinkedIn Corporation, BSD 2-Clause License (suites/liger/LICENSE.liger-kernel).
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
NUM_WARPS = 32  # ks:tune NUM_WARPS=[4, 8, 16, 32]


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def _swiglu_forward_kernel(
    a_ptr, b_ptr, c_ptr, stride, gate_multiplier, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr
):
    program_id = tl.program_id(0).to(tl.int64)

    # locate start index
    a_ptr += program_id * stride
    b_ptr += program_id * stride
    c_ptr += program_id * stride

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    # sigmoid requires type float32
    a_row = tl.load(a_ptr + col_offsets, mask=mask, other=0).to(tl.float32) * gate_multiplier.to(tl.float32)
    b_row = tl.load(b_ptr + col_offsets, mask=mask, other=0)
    c_row = silu(a_row).cast(b_row.dtype) * b_row
    tl.store(c_ptr + col_offsets, c_row, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
        shape = gate.shape
        n_cols = shape[-1]
        a = gate.view(-1, n_cols)
        b = up.view(-1, n_cols)
        c = torch.empty_like(a)
        _swiglu_forward_kernel[(a.shape[0],)](
            a, b, c, c.stride(-2), 1.0, n_cols=n_cols,
            BLOCK_SIZE=triton.next_power_of_2(n_cols), num_warps=NUM_WARPS)
        return c.view(*shape)
# EVOLVE-BLOCK-END
