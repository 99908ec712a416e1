# Adversarial corpus problem (round 23): row L2 norms of a (1024, 2048) fp32 N(0, 1) matrix,
# sized for the cpu backend: torch's x * x, sum, sqrt makes three passes and a temporary
# (about 1.3-1.4 ms a call on one core of the 2-core VM, under 0.5 ms in the warm-up on one
# cached input), a one-pass kernel about 0.75 ms, so a CPU timing sample holds two calls.
import torch
import torch.nn as nn

R, C = 1024, 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sqrt((x * x).sum(dim=1))


def get_inputs():
    return [torch.randn(R, C)]


def get_init_inputs():
    return []
