# Adversarial corpus problem (round 8): r8_bincount at interpreter size, 65536 ids over 1024
# bins (int64 counts, compared exactly).
import torch
import torch.nn as nn

N, VOCAB = 1 << 16, 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.bincount(x, minlength=VOCAB)


def get_inputs():
    u = torch.rand(N)
    return [(VOCAB * u.pow(3.0)).long().clamp_(0, VOCAB - 1)]


def get_init_inputs():
    return []
