# Adversarial corpus problem (round 21): row sums of a (256, 2048) fp32 U[0, 1) matrix, sized
# for the cpu backend (2 MiB: tens of microseconds a call, so a CPU timing sample holds tens
# of calls).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.rand(256, 2048)]


def get_init_inputs():
    return []
