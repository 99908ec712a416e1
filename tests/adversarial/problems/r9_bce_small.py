# Adversarial corpus problem (round 9): binary cross-entropy of predicted probabilities
# (sigmoid outputs, in (0, 1)) against soft targets in [0, 1), mean over (64, 4096). The
# reference raises on a probability outside [0, 1], so the problem's inputs have a domain.
import torch
import torch.nn as nn
import torch.nn.functional as F

B, N = 64, 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy(pred, target)


def get_inputs():
    return [torch.sigmoid(torch.randn(B, N)), torch.rand(B, N)]


def get_init_inputs():
    return []
