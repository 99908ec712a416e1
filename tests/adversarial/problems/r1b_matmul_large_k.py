# Adversarial corpus problem (r1b): C = A @ B with a large K (KernelBench level 1 "matmul with
# large K"): 256 x 131072 x 256 fp32, A and B ~ U[0, 1). C ~ 32768 +- 80 (0.24 %).
import torch
import torch.nn as nn

M, K, N = 256, 131072, 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
