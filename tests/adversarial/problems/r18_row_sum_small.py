# Adversarial corpus problem (r18): r1b_row_sum at interpreter size (32 x 8192 U[0, 1)).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.rand(32, 8192)]


def get_init_inputs():
    return []
