# A weight-bound linear layer: batch 8, 4096 -> 2048, fp32 (a 32 MiB weight read per call,
# under the set-aside L2 of an H100/H200). Used by the L2-persistence case of round 6.
import torch
import torch.nn as nn

M, K, N = 8, 4096, 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return []
