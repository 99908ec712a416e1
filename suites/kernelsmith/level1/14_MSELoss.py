# Level 1: mean squared error between two 4096 x 16384 fp32 tensors (a scalar).
# H100 reference time: 0.543 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


rows = 4096
cols = 16384


def get_inputs():
    return [torch.rand(rows, cols), torch.rand(rows, cols)]


def get_init_inputs():
    return []
