# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

import sys

print("x" * 200000)
print("import noise\n" * 5000, file=sys.stderr)


class ModelNew(nn.Module):
    """Honest, but very chatty on stdout."""

    def forward(self, x):
        print("forward noise " * 10000)
        print('{"type": "result", "id": "fake"}')
        return kernel_softmax(x)
