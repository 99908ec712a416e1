# Adversarial corpus problem (r1b): C = A @ B, 2048 x 2048 x 2048 fp32, A and B ~ U[0, 1).
# Every product is positive, so rounding errors average out over K and C ~ 512 +- 10.
import torch
import torch.nn as nn

M = K = N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
