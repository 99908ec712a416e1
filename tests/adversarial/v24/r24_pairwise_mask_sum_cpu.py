# Adversarial corpus problem (round 24): a masked aggregation with a per-query key mask (as
# a padded attention with uniform weights, or a graph's adjacency over a padded batch): for
# every query i of a sequence b, the sum of the values v[b, j] over the keys its mask lets
# through. Each query row lets through a prefix of random length L uniform in [1, S]. The
# mask is boolean (B, S, S), 8 MiB; the values torch.rand (B, S), 32 KiB.
import torch
import torch.nn as nn

B, S = 8, 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return (mask * v[:, None, :]).sum(dim=-1)


def get_inputs():
    lengths = torch.randint(1, S + 1, (B, S, 1))
    return [torch.rand(B, S), torch.arange(S)[None, None, :] < lengths]


def get_init_inputs():
    return []
