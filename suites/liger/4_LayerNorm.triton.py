# Seed for 4_LayerNorm.py: liger-kernel's LayerNorm forward, launched as layer_norm_forward
# launches it (one program per row, BLOCK_SIZE = next power of 2 of the hidden size, num_warps
# from calculate_settings: 8 for 4096).
# The kernel below is liger-kernel 0.8.5's, copied verbatim from liger_kernel/ops/layer_norm.py:
# Copyright 2024 LinkedIn Corporation, BSD 2-Clause License (suites/liger/LICENSE.liger-kernel).
import torch
import torch.nn as nn
import triton
import triton.language as tl

try:
    from triton.language.extra.libdevice import rsqrt
except ModuleNotFoundError:  # NGC containers
    from triton.language.extra.cuda.libdevice import rsqrt

# EVOLVE-BLOCK-START
NUM_WARPS = 8  # ks:tune NUM_WARPS=[1, 2, 4, 8, 16]


@triton.jit
def _layer_norm_forward_kernel(
    Y_ptr,  # pointer to output, shape (n_rows, n_cols)
    Y_row_stride,  # stride of each row in output
    X_ptr,  # pointer to input, shape (n_rows, n_cols)
    X_row_stride,  # stride of each row in input
    W_ptr,  # pointer to weights, shape (n_cols,)
    W_row_stride,  # stride of each row in weights
    B_ptr,  # pointer to bias, shape (n_cols,)
    B_row_stride,  # stride of each row in bias
    Mean_ptr,  # pointer to mean, shape (n_rows,)
    Mean_row_stride,  # stride of each row in mean
    RSTD_ptr,  # pointer to rstd, shape (n_rows,)
    RSTD_row_stride,  # stride of each row in rstd
    n_cols,
    eps,
    BLOCK_SIZE: tl.constexpr,
):
    """
    References:
    https://arxiv.org/abs/1607.06450
    https://github.com/karpathy/llm.c/blob/master/doc/layernorm/layernorm.md
    """
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    # Pre-load weights and bias in fp32 to avoid repeated conversions
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0)
    B_row = tl.load(B_ptr + col_offsets, mask=mask, other=0.0)
    W_f32 = W_row.to(tl.float32)
    B_f32 = B_row.to(tl.float32)

    # Calculate pointers for this row
    row_X_ptr = X_ptr + row_idx * X_row_stride
    row_Y_ptr = Y_ptr + row_idx * Y_row_stride
    row_Mean_ptr = Mean_ptr + row_idx * Mean_row_stride
    row_RSTD_ptr = RSTD_ptr + row_idx * RSTD_row_stride

    # Load input data and convert to fp32 for numerical stability
    X_row = tl.load(row_X_ptr + col_offsets, mask=mask, other=0.0)
    X_f32 = X_row.to(tl.float32)

    # Compute statistics in fp32 for numerical stability
    mean = tl.sum(X_f32, axis=0) / n_cols
    X_centered = X_f32 - mean
    # Apply mask to variance calculation to exclude contributions from masked elements
    X_centered_masked = tl.where(mask, X_centered, 0.0)
    var = tl.sum(X_centered_masked * X_centered_masked, axis=0) / n_cols
    rstd = rsqrt(var + eps.to(tl.float32))

    # Preserve the fp32 statistics used by forward for the backward pass.
    tl.store(row_Mean_ptr, mean)
    tl.store(row_RSTD_ptr, rstd)

    # Fused normalization and affine transformation
    # Y = (X - mean) * rstd * W + B = X_centered * rstd * W + B
    Y_f32 = X_centered * rstd * W_f32 + B_f32

    # Store output (single conversion back to original dtype)
    tl.store(row_Y_ptr + col_offsets, Y_f32.to(X_row.dtype), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden, dtype=torch.bfloat16))
        self.bias = nn.Parameter(0.1 * torch.randn(hidden, dtype=torch.bfloat16))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x = x.view(-1, shape[-1])
        n_rows, n_cols = x.shape
        y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
        mean = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        _layer_norm_forward_kernel[(n_rows,)](
            y, y.stride(0), x, x.stride(0), self.weight, self.weight.stride(0), self.bias,
            self.bias.stride(0), mean, mean.stride(0), rstd, rstd.stride(0), n_cols, self.eps,
            BLOCK_SIZE=triton.next_power_of_2(n_cols), num_warps=NUM_WARPS)
        return y.view(*shape)
# EVOLVE-BLOCK-END
