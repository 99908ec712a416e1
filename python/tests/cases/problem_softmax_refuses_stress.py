# Test problem: softmax over 64 columns of values in [0, 1), and a reference that refuses any
# value outside that range, or values whose mean is far below the range's (as a problem with
# a domain it does not declare): every stress trial's reference raises, so none can check
# the candidate.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool((x < 0).any()) or bool((x >= 1).any()) or float(x.mean()) < 0.25:
            raise ValueError("the scores must lie in [0, 1)")
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(32, 64)]


def get_init_inputs():
    return []
