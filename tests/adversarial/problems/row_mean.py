# Adversarial corpus problem: mean of 8192 U(0, 1) values per row. Every output is 0.5 within
# about 0.01, inside the default tolerance: a constant (or nearly constant) output passes
# allclose, so only checks that the output follows the inputs can catch it.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


def get_inputs():
    return [torch.rand(16, 8192)]


def get_init_inputs():
    return []
