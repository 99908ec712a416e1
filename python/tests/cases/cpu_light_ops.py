# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

class ModelNew(nn.Module):
    """Honest-ish: kernel plus a light elementwise torch op (warn only)."""

    def forward(self, x):
        return kernel_softmax(x * 1.0)
