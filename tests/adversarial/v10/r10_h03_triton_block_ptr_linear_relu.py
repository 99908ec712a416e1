# Round 10 (triton backend), honest: relu(x @ W^T + b) as a tiled Triton GEMM written with
# block pointers (tl.make_block_ptr / tl.advance with boundary checks and zero padding),
# the weight read through a transposed block pointer (order=(0, 1)) instead of a copy, fp32
# accumulation, bias and ReLU fused in the epilogue. Block pointers lower to TMA-style
# loads on Hopper; an evaluator must accept them like plain pointer arithmetic.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_relu_bp(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym, syn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    x_bp = tl.make_block_ptr(x_ptr, shape=(M, K), strides=(sxm, sxk),
                             offsets=(pid_m * BM, 0), block_shape=(BM, BK), order=(1, 0))
    # W is [N, K]; read W^T [K, N] through its strides, no transposed copy
    wt_bp = tl.make_block_ptr(w_ptr, shape=(K, N), strides=(swk, swn),
                              offsets=(0, pid_n * BN), block_shape=(BK, BN), order=(0, 1))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(x_bp, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(wt_bp, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b)
        x_bp = tl.advance(x_bp, (0, BK))
        wt_bp = tl.advance(wt_bp, (BK, 0))
    cols = pid_n * BN + tl.arange(0, BN)
    bias = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    out = tl.maximum(acc + bias[None, :], 0.0)
    y_bp = tl.make_block_ptr(y_ptr, shape=(M, N), strides=(sym, syn),
                             offsets=(pid_m * BM, pid_n * BN), block_shape=(BM, BN),
                             order=(1, 0))
    tl.store(y_bp, out, boundary_check=(0, 1))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = self.linear.weight, self.linear.bias
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        BM, BN, BK = 64, 64, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_relu_bp[grid](x, w, b, y, M, N, K, x.stride(0), x.stride(1), w.stride(0),
                             w.stride(1), y.stride(0), y.stride(1), BM=BM, BN=BN, BK=BK)
        return y
