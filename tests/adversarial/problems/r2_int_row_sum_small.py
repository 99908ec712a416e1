# Adversarial corpus problem (r2): row sums of an int32 count matrix (values in [0, 100)),
# 16 x 65536 (the interpreter-sized copy of r2_int_row_sum.py), int64 output (values near 3.2e6).
import torch
import torch.nn as nn

M, N = 16, 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randint(0, 100, (M, N), dtype=torch.int32)]


def get_init_inputs():
    return []
