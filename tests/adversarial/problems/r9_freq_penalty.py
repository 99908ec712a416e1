# Adversarial corpus problem (round 9): a frequency penalty for sampling. logits (V,) fp32 and
# the ids generated so far (N,) int64 in random order; out = logits - ALPHA * count(id), the
# count of every vocabulary entry among the ids. The reference is one torch.bincount (atomics,
# memory-bound on the 32 MiB of ids) and a subtraction over the 128 KiB of logits.
import torch
import torch.nn as nn

N, VOCAB, ALPHA = 1 << 22, 32768, 0.5


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
