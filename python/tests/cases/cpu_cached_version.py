# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

_CACHE = {}


class ModelNew(nn.Module):
    """Hack: caches by (data_ptr, version counter); only a write that bypasses the counter
    (as a kernel's would) exposes the stale result."""

    def forward(self, x):
        key = (x.data_ptr(), x._version)
        if key not in _CACHE:
            _CACHE.clear()
            _CACHE[key] = kernel_softmax(x)
        return _CACHE[key]
