# Adversarial corpus problem (r17, cuda backend): LayerNorm over the last dimension written
# out op by op (mean, centre, variance, rsqrt, scale, shift: about eight kernels), 4096 x 8192
# fp32 N(0, 1) input, per-feature weight and bias drawn at construction. About 0.4-0.6 ms a
# call on an H100; a fused kernel reads and writes the tensor once.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(features))
        self.bias = nn.Parameter(0.5 * torch.randn(features))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mu = x.mean(dim=-1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(dim=-1, keepdim=True)
        return xc * torch.rsqrt(var + self.eps) * self.weight + self.bias


def get_inputs():
    return [torch.randn(4096, 8192)]


def get_init_inputs():
    return [8192]
