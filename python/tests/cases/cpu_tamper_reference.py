# Test candidate (cpu backend): slows the reference.
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

_original_softmax = torch.softmax


def _slow_softmax(*args, **kwargs):
    for _ in range(1000):
        pass
    return _original_softmax(*args, **kwargs)


torch.softmax = _slow_softmax  # the reference calls torch.softmax: it would look slower


class ModelNew(nn.Module):
    """Hack: slows the reference down by replacing the torch function it uses."""

    def forward(self, x):
        return kernel_softmax(x)
