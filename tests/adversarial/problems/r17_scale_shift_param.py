# Adversarial corpus problem (r17, cuda backend): y = x * W + b with a full-size weight
# parameter W (4096 x 4096 fp32, 64 MiB) and a per-column bias b, both drawn at construction.
# Two torch kernels (mul, add), about 0.1-0.15 ms a call on an H100; a fused kernel reads x
# and W once and writes y once.
import torch
import torch.nn as nn

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(N, N))
        self.bias = nn.Parameter(torch.randn(N))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight + self.bias


def get_inputs():
    return [torch.randn(N, N)]


def get_init_inputs():
    return []
