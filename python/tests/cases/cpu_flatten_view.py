# Test candidate (cpu backend): a view of its input, as the reference returns one.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1)
