# Adversarial corpus problem (r1b): cross-entropy loss (a 0-d scalar) of 65536 x 16 N(0, 1)
# logits against uniform random targets (KernelBench level 1 "CrossEntropyLoss", larger batch).
import torch
import torch.nn as nn

BATCH, CLASSES = 65536, 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(predictions, targets)


def get_inputs():
    return [torch.randn(BATCH, CLASSES), torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs():
    return []
