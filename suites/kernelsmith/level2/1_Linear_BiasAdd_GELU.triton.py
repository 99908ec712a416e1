# triton seed for 1_Linear_BiasAdd_GELU.py: one tiled matmul x @ W^T (W read through its
# strides, no transpose copy) with the linear bias, the extra bias and the exact GELU fused
# into the epilogue. IEEE fp32 dot (no TF32).
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_M = 32
BLOCK_N = 32
BLOCK_K = 32
num_warps = 4
num_stages = 2


@triton.jit
def linear_bias_gelu_kernel(x_ptr, w_ptr, b1_ptr, b2_ptr, y_ptr, M, N, K,
                            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                            K_TILES: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for kt in range(K_TILES):
        k = kt * BK + rk
        a = tl.load(x_ptr + rm[:, None] * K + k[None, :],
                    mask=(rm[:, None] < M) & (k[None, :] < K), other=0.0)
        # W is (N, K) row-major; this loads the (BK, BN) tile of W^T.
        b = tl.load(w_ptr + rn[None, :] * K + k[:, None],
                    mask=(k[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    bias = tl.load(b1_ptr + rn, mask=rn < N, other=0.0) + tl.load(b2_ptr + rn, mask=rn < N,
                                                                  other=0.0)
    v = acc + bias[None, :]
    v = 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], v, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(0.1 * torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        linear_bias_gelu_kernel[grid](x, self.linear.weight, self.linear.bias, self.bias, y,
                                      M, N, K, BM=BLOCK_M, BN=BLOCK_N, BK=BLOCK_K,
                                      K_TILES=triton.cdiv(K, BLOCK_K), num_warps=num_warps,
                                      num_stages=num_stages)
        return y
# EVOLVE-BLOCK-END
