# A verbatim copy of a class from act.py (vendored code happens): an exact duplicate.
import torch
import torch.nn as nn


class GatedLinearUnit(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * hidden)
        self.out = nn.Linear(hidden, dim)

    def forward(self, x):
        a, b = self.proj(x).chunk(2, dim=-1)
        return self.out(a * torch.sigmoid(b))
