# act.GatedLinearUnit with its class, parameters and locals renamed (and other comments and
# docstrings): a renamed duplicate, caught by the normalized AST hash.
import torch
import torch.nn as nn


class SigmoidGate(nn.Module):
    """Gated projection (docstrings do not count)."""

    def __init__(self, features, inner):
        super().__init__()
        self.proj = nn.Linear(features, 2 * inner)
        self.out = nn.Linear(inner, features)

    def forward(self, inp):
        # comments do not count either
        value, gate = self.proj(inp).chunk(2, dim=-1)
        return self.out(value * torch.sigmoid(gate))
