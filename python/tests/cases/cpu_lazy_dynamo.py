# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax


class ModelNew(nn.Module):
    """Honest: imports torch._dynamo inside forward, which rebinds torch.manual_seed to
    torch's own wrapper of it (and lists packages, makes its cache folder)."""

    def forward(self, x):
        import torch._dynamo  # noqa: F401

        return kernel_softmax(x)
