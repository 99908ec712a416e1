# Level 1: mean cross-entropy loss of 65536 x 1000 logits against integer class targets.
# H100 reference time: 0.248 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(logits, targets)


batch = 65536
num_classes = 1000


def get_inputs():
    return [torch.randn(batch, num_classes), torch.randint(0, num_classes, (batch,))]


def get_init_inputs():
    return []
