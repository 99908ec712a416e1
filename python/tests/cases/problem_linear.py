# Test problem with parameters: Model and ModelNew must be built from the same seed.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.t()


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return [16, 12]
