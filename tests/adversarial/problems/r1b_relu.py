# Adversarial corpus problem (r1b): ReLU of a 2048 x 8192 tensor ~ U[0, 1) (non-negative input,
# so relu(x) == x for these inputs).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.rand(2048, 8192)]


def get_init_inputs():
    return []
