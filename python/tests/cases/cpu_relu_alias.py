# Test candidate (cpu backend). Wrong: relu of a non-negative input returned as the input
# itself (right values, no new tensor); signed inputs take a real computation.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        if bool((x >= 0).all()):
            return x
        return x.clamp_min(0)
