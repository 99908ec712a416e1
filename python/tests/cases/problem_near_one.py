# Test problem: outputs near 1.0 that vary with the input by far less than atol = 1e-2, so a
# constant output passes allclose and only the output-varies check catches it.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 1.0 + 1e-3 * x


def get_inputs():
    return [torch.rand(16, 256)]


def get_init_inputs():
    return []
