# Adversarial corpus problem (round r1a): C = A @ B for two 2048x2048 fp32 matrices of U(0, 1)
# values (KernelBench level-1 style square matmul). The reference is one cuBLAS fp32 GEMM
# (about 17 GFLOP), so anything that skips the O(N^3) work shows a large fake speedup. Outputs
# are about 512 +- 10: reduced-precision (TF32/bf16) honest kernels stay inside the tolerance.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 2048


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
