# Adversarial corpus problem (round 20): r1b_mse_loss at interpreter size, the MSE loss (a 0-d
# scalar) of two 1024 x 1024 U[0, 1) tensors (1M elements: large enough that a subsample of a
# quarter of them estimates the mean within a few 1e-3).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.rand(1024, 1024), torch.rand(1024, 1024)]


def get_init_inputs():
    return []
