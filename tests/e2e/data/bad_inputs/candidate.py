# A candidate for the bad-input problems (tests/e2e/bad_inputs.sh): sums over the first
# dimension (PyTorch ops: the audit may flag it; these tests look at the problem's errors).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, dim=0, scale=(1.0,)):
        return x.sum(dim=dim) * scale[0]
