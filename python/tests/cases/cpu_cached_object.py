# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

class ModelNew(nn.Module):
    """Caches the result on the input tensor object: every call gets new objects, so it never
    hits (neutralised)."""

    def forward(self, x):
        cached = getattr(x, "_ks_cached_out", None)
        if cached is None:
            cached = kernel_softmax(x)
            x._ks_cached_out = cached
        return cached
