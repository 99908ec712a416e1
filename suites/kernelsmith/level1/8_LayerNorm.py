# Level 1: LayerNorm over the last dimension (8192 rows of 4096), with affine weight and bias.
# H100 reference time: 0.140 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        with torch.no_grad():  # non-trivial affine parameters (same seed -> same values)
            self.ln.weight.copy_(1.0 + 0.1 * torch.randn(dim))
            self.ln.bias.copy_(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


rows = 8192
dim = 4096


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim]
