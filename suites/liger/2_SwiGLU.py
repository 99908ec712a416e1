# liger-kernel's SwiGLU forward (silu(gate) * up, Triton) at Llama-3-8B's MLP width, bf16:
# the production kernel is the reference. Needs `pip install liger-kernel`. Seed:
# 2_SwiGLU.triton.py (the same kernel).
import torch
import torch.nn as nn
from liger_kernel.ops.swiglu import swiglu_forward

INTERMEDIATE = 14336
# Tokens per call: decode steps at batch 1..256 and one prefill (weights: how often each runs).
TOKEN_CASES = [("decode 1", 1, 2), ("decode 32", 32, 2), ("decode 256", 256, 2),
               ("prefill 4096", 4096, 1)]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
        return swiglu_forward(gate, up)[2]


def _inputs(n: int) -> list:
    return [torch.randn(n, INTERMEDIATE, dtype=torch.bfloat16),
            torch.randn(n, INTERMEDIATE, dtype=torch.bfloat16)]


def get_input_cases():
    return [{"name": name, "weight": w, "inputs": lambda n=n: _inputs(n)}
            for name, n, w in TOKEN_CASES]


def get_inputs():
    return _inputs(256)


def get_init_inputs():
    return []
