# Adversarial corpus problem (r1b): C = A @ B, 128 x 256 x 128 fp32, A and B ~ U[0, 1).
# Small enough for Triton's interpreter; the same candidates run unchanged on r1b_matmul.py.
import torch
import torch.nn as nn

M, K, N = 128, 256, 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
