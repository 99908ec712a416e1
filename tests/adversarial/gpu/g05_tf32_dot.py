# Adversarial corpus (triton backend, GPU only). Honest: fused linear + bias + ReLU whose dot
# runs explicitly in TF32 (10-bit mantissa inputs, fp32 accumulation), within the tolerance.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_relu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K: tl.constexpr,
                       BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, K)
    x = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
    w = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=rn[None, :] < N, other=0.0)
    acc = tl.dot(x, w, input_precision="tf32") + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], tl.maximum(acc, 0.0),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        y = torch.empty(M, N, dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        linear_relu_kernel[grid](x, self.linear.weight, self.linear.bias, y, M, N, K, BM=32, BN=32)
        return y
