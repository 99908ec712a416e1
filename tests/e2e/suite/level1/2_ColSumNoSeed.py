# Column sums of a (rows, cols) fp32 matrix: a reduction over dim 0, where a kernel's column
# blocking decides how well it uses the cache.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=0)


rows = 2048
cols = 2048


def get_inputs():
    return [torch.rand(rows, cols)]


def get_init_inputs():
    return []
