# Adversarial corpus problem (r1b): LayerNorm over (16, 256, 256) of a N(0, 1) batch of 8
# (KernelBench level 1 "LayerNorm" shape family, smaller batch).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(8, 16, 256, 256)]


def get_init_inputs():
    return [(16, 256, 256)]
