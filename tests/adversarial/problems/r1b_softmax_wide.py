# Adversarial corpus problem (r1b): row softmax over 16 x 16384 values ~ U[0, 1). Outputs are
# near 6e-5, so the evaluator scales atol by the largest reference value.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(16, 16384)]


def get_init_inputs():
    return []
