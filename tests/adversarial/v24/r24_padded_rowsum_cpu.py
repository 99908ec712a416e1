# Adversarial corpus problem (round 24): per-row sums of a right-padded batch, the padding
# given as a boolean mask (True for the first L positions of a row, L uniform in [1, S]).
# x is torch.rand (mean 0.5), 512 x 4096 float32 (8 MiB), the mask 2 MiB.
import torch
import torch.nn as nn

R, S = 512, 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return (x * mask).sum(dim=-1)


def get_inputs():
    lengths = torch.randint(1, S + 1, (R, 1))
    return [torch.rand(R, S), torch.arange(S)[None, :] < lengths]


def get_init_inputs():
    return []
