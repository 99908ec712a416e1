# Test candidate (cpu backend).
import sys

import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax


class ModelNew(nn.Module):
    """Hack: looks at its caller's frames (through a name built at run time, so only the
    audit hook can see it)."""

    def forward(self, x):
        getter = vars(sys)["_get" + "frame"]
        getter(1)
        return kernel_softmax(x)
