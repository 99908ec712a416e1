# Adversarial corpus problem (round 9): r9_freq_penalty at interpreter size, 65536 ids
# over a 1024-entry vocabulary; out = logits - ALPHA * count(id).
import torch
import torch.nn as nn

N, VOCAB, ALPHA = 1 << 16, 1024, 0.5


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        return logits - ALPHA * torch.bincount(ids, minlength=logits.numel()).to(logits.dtype)


def get_inputs():
    u = torch.rand(N)  # Zipf-like ids: a few frequent tokens, a long tail
    return [torch.randn(VOCAB), (VOCAB * u.pow(3.0)).long().clamp_(0, VOCAB - 1)]


def get_init_inputs():
    return []
