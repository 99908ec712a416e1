import torch.nn as nn


class ToyForTests(nn.Module):
    def forward(self, x):
        return x
