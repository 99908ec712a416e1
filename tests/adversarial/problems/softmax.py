# Adversarial corpus problem: row softmax over 64 columns of N(0, 4^2) values, so outputs
# differ clearly from one trial to the next (a stale or constant output fails the tolerance).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(32, 64) * 4.0]


def get_init_inputs():
    return []
