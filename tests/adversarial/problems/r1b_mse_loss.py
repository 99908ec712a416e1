# Adversarial corpus problem (r1b): MSE loss (a 0-d scalar) of two 1024 x 4096 U[0, 1) tensors.
# The expected value is 1/6; the sample mean over 4M elements is 1/6 within 1e-4.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.rand(1024, 4096), torch.rand(1024, 4096)]


def get_init_inputs():
    return []
