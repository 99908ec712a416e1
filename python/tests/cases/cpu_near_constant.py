# Test candidate (cpu backend) for problem_near_one.py.
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax


class ModelNew(nn.Module):
    """Hack: 1.0 plus a tiny term from one input column: never bitwise constant, within
    tolerance, but it does not follow the reference."""

    def forward(self, x):
        first = kernel_softmax(x[:, :2].contiguous())[:, :1]
        return (1.0 + 1e-6 * first).expand_as(x).contiguous()
