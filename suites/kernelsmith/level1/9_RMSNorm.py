# Level 1: RMSNorm over the last dimension (8192 rows of 4096): x / sqrt(mean(x^2) + eps) * weight.
# H100 reference time: 0.370 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


rows = 8192
dim = 4096


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim]
