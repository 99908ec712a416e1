# Adversarial corpus problem (round 10): y = relu(x @ W^T + b) sized for the cpu backend,
# (256 x 1024) @ (1024 x 1024): about 0.5 GFLOP a call, milliseconds on a few cores.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return [1024, 1024]
