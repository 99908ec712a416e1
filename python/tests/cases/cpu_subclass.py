# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

class Sneaky(torch.Tensor):
    pass


class ModelNew(nn.Module):
    """Wrong: returns a torch.Tensor subclass."""

    def forward(self, x):
        return kernel_softmax(x).as_subclass(Sneaky)
