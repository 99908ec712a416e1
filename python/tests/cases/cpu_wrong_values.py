# Test candidate (cpu backend): wrong values.
import torch
import torch.nn as nn

from softmax_cpp import _lib

class ModelNew(nn.Module):
    """Wrong: normalises half-rows instead of rows (no torch compute involved)."""

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.softmax_rows(x, y, x.shape[0] * 2, x.shape[1] // 2)
        return y
