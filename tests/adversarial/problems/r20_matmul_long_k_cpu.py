# Adversarial corpus problem (round 20): r1b_matmul_large_k at CPU size, C = A @ B with
# A 64 x 16384 and B 16384 x 64 U[0, 1) (a long K: a rank-1 "mean-field" product of the row
# and column sums is within a few 1e-3 of C on such inputs).
import torch
import torch.nn as nn

M, K, N = 64, 16384, 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
