# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

import sys


class ModelNew(nn.Module):
    """Broken: forward calls sys.exit."""

    def forward(self, x):
        sys.exit(3)
