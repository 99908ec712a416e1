# Level 1: matrix-vector product (8192 x 16384) @ (16384 x 1), memory-bound.
# H100 reference time: 0.181 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, v)


M = 8192
K = 16384


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, 1)]


def get_init_inputs():
    return []
