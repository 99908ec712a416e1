# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

class ModelNew(nn.Module):
    """Wrong: drops the last column."""

    def forward(self, x):
        return kernel_softmax(x)[:, :-1]
