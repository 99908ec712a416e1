# Adversarial corpus problem (round 9): r9_masked_log_softmax at interpreter size, scores
# (8, 32768) fp32 and a key-padding mask; -inf at masked positions of the output.
import torch
import torch.nn as nn

B, L = 8, 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return scores.masked_fill(~mask, float("-inf")).log_softmax(dim=-1)


def get_inputs():
    lengths = torch.randint(L // 2, L + 1, (B,))
    mask = torch.arange(L)[None, :] < lengths[:, None]
    return [torch.randn(B, L), mask]


def get_init_inputs():
    return []
