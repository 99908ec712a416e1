# Test candidate (cpu backend): right for 64 columns only (the row length is hard-coded).
import torch
import torch.nn as nn

from softmax_cpp import _lib

class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _lib.softmax_rows(x, y, x.numel() // 64, 64)
        return y
