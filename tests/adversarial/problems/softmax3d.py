# Adversarial corpus problem: softmax over the last dimension of a 3-D tensor (candidates may
# flatten the leading dimensions with a view).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(4, 8, 64) * 4.0]


def get_init_inputs():
    return []
