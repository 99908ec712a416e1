"""Blocks that use helpers, constants, bases and submodules of this file and of norms.py."""
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange
from timm.layers import DropPath

from .norms import RMSNorm as Norm

SCALE = 0.5
_unused_constant = 12


def scaled_gelu(x: torch.Tensor, scale: float = SCALE) -> torch.Tensor:
    return F.gelu(x) * scale


def _init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, std=1.0 / math.sqrt(m.in_features))


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: Optional[int] = None):
        super().__init__()
        hidden = hidden or dim * 2
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.apply(_init_weights)

    def forward(self, x):
        return self.fc2(scaled_gelu(self.fc1(x)))


class BaseBlock(nn.Module):
    """Abstract: no forward here."""

    def extra(self):
        return "base"


class MidBlock(BaseBlock):
    def forward(self, x):
        return self.inner(x) + x


class ResMlp(MidBlock):
    """Indirect base: ResMlp -> MidBlock -> BaseBlock -> nn.Module."""

    def __init__(self, dim):
        super().__init__()
        self.norm = Norm(dim)
        self.inner = Mlp(dim)

    def forward(self, x):
        return super().forward(self.norm(x))


class UsesEinops(nn.Module):
    def forward(self, x):
        return rearrange(x, "b c h w -> b (h w) c")


class UsesDropPath(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.drop = DropPath(0.1)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.drop(self.fc(x))


class LocalImport(nn.Module):
    def forward(self, x):
        import scipy.special
        return x


if __name__ == "__main__":
    print(ResMlp(8)(torch.randn(2, 8)))
