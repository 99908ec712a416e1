# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

class ModelNew(nn.Module):
    """Honest: the C++ kernel does the work."""

    def forward(self, x):
        return kernel_softmax(x)
