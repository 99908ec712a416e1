# Adversarial corpus problem (round 8): histogram of 4M token ids over a 32768-entry
# vocabulary (token frequency counts for a sampling penalty). x is a 1-D int64 tensor in
# random order; the output is an int64 count per id, compared exactly. The reference is one
# torch.bincount (atomics in shared memory, memory-bound on the 32 MiB of ids).
import torch
import torch.nn as nn

N, VOCAB = 1 << 22, 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.bincount(x, minlength=VOCAB)


def get_inputs():
    # Zipf-like ids: a few frequent tokens, a long tail
    u = torch.rand(N)
    return [(VOCAB * u.pow(3.0)).long().clamp_(0, VOCAB - 1)]


def get_init_inputs():
    return []
