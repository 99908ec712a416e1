# Adversarial corpus problem (round 10): r1b_mse_loss at interpreter size, the MSE loss (a
# 0-d scalar) of two 64 x 512 U[0, 1) tensors.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.rand(64, 512), torch.rand(64, 512)]


def get_init_inputs():
    return []
