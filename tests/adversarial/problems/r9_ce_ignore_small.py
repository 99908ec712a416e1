# Adversarial corpus problem (round 9): token-level cross-entropy of a language model with
# padding: logits (B, T, V) fp32 and targets (B, T) int64 where padded positions hold the
# ignore_index -100 (the last 0-T/4 positions of each row); mean over the other positions.
import torch
import torch.nn as nn
import torch.nn.functional as F

B, T, V = 4, 64, 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)


def get_inputs():
    targets = torch.randint(0, V, (B, T))
    pad = torch.randint(0, T // 4 + 1, (B,))
    targets[torch.arange(T)[None, :] >= (T - pad)[:, None]] = -100
    return [torch.randn(B, T, V), targets]


def get_init_inputs():
    return []
