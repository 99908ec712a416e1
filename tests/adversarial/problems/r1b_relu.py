# Adversarial corpus problem (r1b): ReLU of a 2048 x 8192 tensor ~ U[0, 1) (non-negative input,
# so relu(x) == x for these inputs). Under Triton's interpreter (the corpus's CPU part) 256 x 8192:
# the same kernels and tells, a call in a fraction of the time.
import os

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


ROWS = 256 if os.environ.get("TRITON_INTERPRET") == "1" else 2048


def get_inputs():
    return [torch.rand(ROWS, 8192)]


def get_init_inputs():
    return []
