# Test problem with two input cases (shapes): softmax over 64 and over 128 columns.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_input_cases():
    return [
        {"name": "narrow", "inputs": lambda: [torch.randn(8, 64) * 4.0], "weight": 3},
        {"name": "wide", "inputs": lambda: [torch.randn(16, 128) * 4.0], "weight": 1},
    ]


def get_inputs():
    return [torch.randn(8, 64) * 4.0]


def get_init_inputs():
    return []
