import torch
import torch.nn as nn

# The same module as original.py with every name changed, comments and another docstring.
def my_fn(inp, factor=2.0):
    # scaled tanh
    return torch.tanh(inp) * factor


class SigmoidGate(nn.Module):
    """A renamed copy."""

    def __init__(self, features):
        super().__init__()
        self.proj = nn.Linear(features, features)  # same attribute name

    def forward(self, z):
        h = self.proj(z)
        return my_fn(h) * torch.sigmoid(z)
