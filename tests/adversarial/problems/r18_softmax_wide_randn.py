# Adversarial corpus problem (r18): softmax over very wide rows of standard normal logits
# (256 x 262144, 256 MiB): a row does not fit in registers, so an exact kernel reads it twice
# (online max/sum, then the output) and writes it once.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(256, 262144)]


def get_init_inputs():
    return []
