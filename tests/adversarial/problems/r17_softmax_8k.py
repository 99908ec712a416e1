# Adversarial corpus problem (r17, cuda backend): row softmax of an 8192 x 8192 fp32 N(0, 1)
# batch (256 MiB in, 256 MiB out: memory-bound, about 0.2 ms a call on an H100).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(8192, 8192)]


def get_init_inputs():
    return []
