# Adversarial corpus problem (round 23): the sum of a 1-D signal over the real positions of a
# left-padded sequence, the padding given as an int64 attention mask (0 for the first S
# positions, 1 after; S uniform in [0, N)), as tokenizers hand it over. x is N(0, 1), 2^21
# elements (8 MiB), the mask 16 MiB.
import torch
import torch.nn as nn

N = 1 << 21


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return (x * mask).sum()


def get_inputs():
    start = int(torch.randint(0, N, (1,)))
    return [torch.randn(N), (torch.arange(N) >= start).long()]


def get_init_inputs():
    return []
