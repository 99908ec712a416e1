# Adversarial corpus problem (r1b): row softmax over 4096 x 128 values ~ U[0, 1). Outputs lie in
# [0.0045, 0.0124]: the largest is just above 0.0101, so atol stays 1e-2 (not scaled), i.e.
# about the size of the values themselves.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(4096, 128)]


def get_init_inputs():
    return []
