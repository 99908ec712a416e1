# Non-tensor inputs the reference accepts: an int and a list next to a tensor
# (tests/e2e/bad_inputs.sh). These must evaluate normally.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, dim, scale):
        return x.sum(dim=dim) * scale[0]


def get_inputs():
    return [torch.rand(8, 8), 0, [2.0]]


def get_init_inputs():
    return []
