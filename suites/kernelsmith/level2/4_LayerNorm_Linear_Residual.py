# Level 2: pre-norm residual projection: x + Linear(LayerNorm(x)), 8192 rows of 1024.
# H100 reference time: 0.415 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.proj(self.norm(x))


batch = 8192
dim = 1024


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim]
