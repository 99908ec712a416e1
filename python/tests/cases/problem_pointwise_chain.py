# Test problem: a chain of pointwise ops (sin, cos, multiply, scale, add, relu) over 32x64
# values: a candidate may leave most of it to torch's (allowed, light) elementwise ops.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.sin(x) * torch.cos(x) + 0.5 * x)


def get_inputs():
    return [torch.randn(32, 64) * 4.0]


def get_init_inputs():
    return []
