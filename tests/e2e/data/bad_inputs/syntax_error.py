# A problem with a syntax error on line 8 (tests/e2e/bad_inputs.sh).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=0))


def get_inputs():
    return [torch.rand(8, 8)]


def get_init_inputs():
    return []
