# Column sums of a (rows, cols) fp32 matrix at the three shapes a workload runs it at: a
# multi-shape problem. Every case is checked; the speedup is the weighted geometric mean of
# the per-case speedups. examples/colsum/cpu_seed.py is a seed for it (same Model interface).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=0)


def get_input_cases():
    # weight: how often the shape runs in the workload
    return [
        {"name": "tall 2048x256", "inputs": lambda: [torch.rand(2048, 256)], "weight": 1},
        {"name": "square 512x512", "inputs": lambda: [torch.rand(512, 512)], "weight": 2},
        {"name": "wide 16x4096", "inputs": lambda: [torch.rand(16, 4096)], "weight": 1},
    ]


# The first case, for tools that read one get_inputs() (a KernelBench problem's interface).
def get_inputs():
    return [torch.rand(2048, 256)]


def get_init_inputs():
    return []
