# Adversarial corpus problem (round r1a): C = A @ B for 256x256 fp32 U(0, 1) matrices: the
# small, interpreter-friendly sibling of r1a_matmul2048.py (same value structure: outputs about
# 64 +- 2.5, dominated by row and column sums).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 256


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
