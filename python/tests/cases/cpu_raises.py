# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

class ModelNew(nn.Module):
    """Broken: forward raises."""

    def forward(self, x):
        kernel_softmax(x)
        raise ValueError("boom in forward")
