# Adversarial corpus problem: softmax over dimension 0 (columns of a row-major matrix), so a
# row kernel needs a transposed copy of the input.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=0)


def get_inputs():
    return [torch.randn(64, 32) * 4.0]


def get_init_inputs():
    return []
