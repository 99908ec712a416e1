# Adversarial corpus problem (r2): r2_shared_bias_add.py at interpreter size (64 x 256).
import torch
import torch.nn as nn

M, N = 64, 256


class Model(nn.Module):
    def __init__(self, bias: torch.Tensor):
        super().__init__()
        self.register_buffer("bias", bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.bias


def get_inputs():
    return [torch.rand(M, N)]


def get_init_inputs():
    return [torch.randn(M, N)]
