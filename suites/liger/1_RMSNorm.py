# liger-kernel's RMSNorm forward (Triton) at Llama-3-8B's hidden size, bf16, "llama" casting:
# the production kernel is the reference. Needs `pip install liger-kernel` (python/
# requirements-liger.txt). Seed: 1_RMSNorm.triton.py (the same kernel).
import torch
import torch.nn as nn
from liger_kernel.ops.rms_norm import rms_norm_forward

HIDDEN = 4096
EPS = 1e-5
# Tokens per call: decode steps at batch 1..256 and one prefill (weights: how often each runs).
TOKEN_CASES = [("decode 1", 1, 2), ("decode 32", 32, 2), ("decode 256", 256, 2),
               ("prefill 4096", 4096, 1)]


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden, dtype=torch.bfloat16))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm_forward(x, self.weight, self.eps, 0.0, "llama", False)[0]


def get_input_cases():
    return [{"name": name, "weight": w,
             "inputs": lambda n=n: [torch.randn(n, HIDDEN, dtype=torch.bfloat16)]}
            for name, n, w in TOKEN_CASES]


def get_inputs():
    return [torch.randn(256, HIDDEN, dtype=torch.bfloat16)]


def get_init_inputs():
    return [HIDDEN, EPS]
