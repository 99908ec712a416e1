# The problem every fault candidate pretends to solve: y = 2x + 1 on a small matrix, cheap
# enough that the corpus spends its time on faults, not on arithmetic.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0 + 1.0


def get_inputs():
    return [torch.rand(64, 64)]


def get_init_inputs():
    return []
