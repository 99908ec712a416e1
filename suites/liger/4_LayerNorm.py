# liger-kernel's LayerNorm forward (Triton) at hidden size 4096, bf16 activations and
# parameters: the production kernel is the reference. Needs `pip install liger-kernel`. Seed:
# 4_LayerNorm.triton.py (the same kernel).
import torch
import torch.nn as nn
from liger_kernel.ops.layer_norm import layer_norm_forward

HIDDEN = 4096
EPS = 1e-5
# Tokens per call: decode steps at batch 1..256 and one prefill (weights: how often each runs).
TOKEN_CASES = [("decode 1", 1, 2), ("decode 32", 32, 2), ("decode 256", 256, 2),
               ("prefill 4096", 4096, 1)]


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden, dtype=torch.bfloat16))
        self.bias = nn.Parameter(0.1 * torch.randn(hidden, dtype=torch.bfloat16))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm_forward(x, self.weight, self.bias, self.eps)[0]


def get_input_cases():
    return [{"name": name, "weight": w,
             "inputs": lambda n=n: [torch.randn(n, HIDDEN, dtype=torch.bfloat16)]}
            for name, n, w in TOKEN_CASES]


def get_inputs():
    return [torch.randn(256, HIDDEN, dtype=torch.bfloat16)]


def get_init_inputs():
    return [HIDDEN, EPS]
