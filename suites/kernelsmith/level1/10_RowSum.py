# Level 1: sum reduction over the last dimension of a 16384 x 8192 fp32 matrix.
# H100 reference time: 0.181 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


rows = 16384
cols = 8192


def get_inputs():
    return [torch.rand(rows, cols)]


def get_init_inputs():
    return []
