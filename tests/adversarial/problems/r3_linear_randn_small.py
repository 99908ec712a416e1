# Round 3: nn.Linear(4096 -> 4096) on standard normal inputs (outputs of order 0.6, so the
# norm-wise timed check's atol term adds ~1-2 % of slack). Interpreter-sized twin of r3_linear_randn.
import torch
import torch.nn as nn

M, K, N = 64, 256, 128


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
