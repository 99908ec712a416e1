# Adversarial corpus problem (r2): y = x + bias, with the bias handed to Model through
# get_init_inputs() (a tensor init input, as some KernelBench problems do with masks or
# constants). 2048 x 4096 fp32. The evaluator passes the *same* init tensor objects to Model and
# ModelNew.
import torch
import torch.nn as nn

M, N = 2048, 4096


class Model(nn.Module):
    def __init__(self, bias: torch.Tensor):
        super().__init__()
        self.register_buffer("bias", bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.bias


def get_inputs():
    return [torch.rand(M, N)]


def get_init_inputs():
    return [torch.randn(M, N)]
