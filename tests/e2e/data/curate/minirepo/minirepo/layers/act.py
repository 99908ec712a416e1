"""Activations and gates."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

GELU_SCALE = math.sqrt(2.0 / math.pi)


def tanh_gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(GELU_SCALE * (x + 0.044715 * torch.pow(x, 3))))


class TanhGELU(nn.Module):
    """GELU with the tanh approximation."""

    def forward(self, x):
        return tanh_gelu(x)


class GatedLinearUnit(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * hidden)
        self.out = nn.Linear(hidden, dim)

    def forward(self, x):
        a, b = self.proj(x).chunk(2, dim=-1)
        return self.out(a * torch.sigmoid(b))
