import torch
import torch.nn as nn


def helper(t, k=3.0):
    return torch.tanh(t) * k


class Gate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.proj(x)
        return helper(y) * torch.sigmoid(x)
