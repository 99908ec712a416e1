# Adversarial corpus problem (round r1a): y = relu(x @ W^T + b), x of 2048x4096, W of 4096x4096
# (nn.Linear's default init). The GEMM (about 69 GFLOP in fp32) dominates; candidates that hide
# it in a library call or slow the reference down show large fake speedups.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(2048, 4096)]


def get_init_inputs():
    return [4096, 4096]
