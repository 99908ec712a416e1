# Adversarial corpus problem (r18): r17_manual_layernorm at interpreter size (256 x 1024):
# a LayerNorm written as eight torch ops (mean, subtract, square, mean, rsqrt, scale, shift),
# so torch's own fused layer_norm is several times faster than the reference on a GPU.
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
    return [torch.randn(64, 1024)]


def get_init_inputs():
    return [1024]
