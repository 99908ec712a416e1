# Adversarial corpus problem (round 8): attention-style softmax with an additive float
# padding mask, scores (2048, 4096) fp32 plus mask (2048, 4096) holding 0 for the first L_r
# positions of row r and -inf after (L_r uniform in [1, 4096]), softmax over the last axis.
import torch
import torch.nn as nn

R, T = 2048, 4096


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
