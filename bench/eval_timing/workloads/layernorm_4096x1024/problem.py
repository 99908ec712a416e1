# LayerNorm over the last dimension of a (4096, 1024) fp32 matrix, with elementwise affine.
import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.LayerNorm(normalized_shape) (eps 1e-5, weight and bias)."""

    def __init__(self, normalized_shape: int):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 4096
features = 1024


def get_inputs():
    x = torch.randn(batch_size, features)
    return [x]


def get_init_inputs():
    return [features]
