# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

class ModelNew(nn.Module):
    """Wrong: writes the result into its input and returns it."""

    def forward(self, x):
        y = kernel_softmax(x)
        x.copy_(y)
        return x
