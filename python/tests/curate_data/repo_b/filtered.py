import time

import torch
import torch.nn as nn


class Noisy(nn.Module):
    """Random every call: non-deterministic."""

    def forward(self, x):
        return x + torch.rand_like(x)


class Exploding(nn.Module):
    """log of negative numbers: non-finite output."""

    def forward(self, x):
        return torch.log(x - 100.0)


class Constant(nn.Module):
    """Ignores its input."""

    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return self.w * 1.0


class Sleeper(nn.Module):
    """Hangs: killed at the timeout."""

    def forward(self, x):
        time.sleep(600)
        return x


class Chatty(nn.Module):
    """Prints on stdout: must not corrupt the JSON Lines output."""

    def forward(self, x):
        print("hello from the module")
        return x * 2


class Lookup(nn.Module):
    """An embedding: deduction must give int64 indices."""

    def __init__(self, num_embeddings, dim):
        super().__init__()
        self.emb = nn.Embedding(num_embeddings, dim)

    def forward(self, idx):
        return self.emb(idx)
