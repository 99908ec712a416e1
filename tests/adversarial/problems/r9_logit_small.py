# Adversarial corpus problem (round 9): r9_logit at interpreter size, (256, 1024) fp32
# probabilities; torch.logit, NaN outside [0, 1].
import torch
import torch.nn as nn

R, C = 256, 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        return torch.logit(p)


def get_inputs():
    return [torch.sigmoid(torch.randn(R, C))]


def get_init_inputs():
    return []
