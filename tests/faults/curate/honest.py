# Honest module: must come out of the curate run as a problem, after the faults.
import torch
import torch.nn as nn


class ScaledTanh(nn.Module):
    def __init__(self, scale: float = 2.0):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * self.scale
