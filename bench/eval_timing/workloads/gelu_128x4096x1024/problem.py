# GELU (exact, erf form: torch's default) over a (128, 4096, 1024) fp32 tensor (2 GiB):
# a bandwidth-bound elementwise reference.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Applies GELU (approximate='none')."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


batch_size = 128
seq_len = 4096
hidden = 1024


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden)
    return [x]


def get_init_inputs():
    return []
