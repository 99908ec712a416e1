# Adversarial corpus problem (round 8): r8_additive_mask_softmax at interpreter size, scores
# (64, 512) fp32 plus an additive padding mask (0 for the first L_r positions, -inf after).
import torch
import torch.nn as nn

R, T = 64, 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.softmax(scores + mask, dim=-1)


def get_inputs():
    lengths = torch.randint(1, T + 1, (R,))
    mask = torch.zeros(R, T)
    mask[torch.arange(T)[None, :] >= lengths[:, None]] = float("-inf")
    return [torch.randn(R, T) * 2.0, mask]


def get_init_inputs():
    return []
