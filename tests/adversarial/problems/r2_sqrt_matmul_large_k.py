# Adversarial corpus problem (r2): C = sqrt(A) @ B with a large K, 256 x 131072 x 256 fp32,
# A and B ~ U[0, 1) (a "feature map then matmul" problem). sqrt of a negative value is NaN,
# so the reference is not finite on both stress draws (signed and wide).
import torch
import torch.nn as nn

M, K, N = 256, 131072, 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(torch.sqrt(A), B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
