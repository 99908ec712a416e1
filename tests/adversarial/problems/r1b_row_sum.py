# Adversarial corpus problem (r1b): row sums of 128 x 65536 values ~ U[0, 1). Every sum is
# 32768 +- 74 (0.23 %), within tolerance of the mean: the near-constant rule applies.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.rand(128, 65536)]


def get_init_inputs():
    return []
