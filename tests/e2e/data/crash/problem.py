# A small column sum for the kill -9 test (tests/e2e/crash.sh): the same shape of problem as
# examples/colsum, sized so that one evaluation on the cpu backend takes well under a second.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=0)


def get_inputs():
    return [torch.rand(256, 256)]


def get_init_inputs():
    return []
