# Row-wise softmax over a small (16, 16384) fp32 matrix: a launch-latency-sized kernel.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies softmax over dim 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 16
dim = 16384


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
