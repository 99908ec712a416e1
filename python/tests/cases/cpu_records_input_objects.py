# Test candidate (cpu backend): honest, and records what its input objects show at every call
# (trials, stress trials, audit calls, timed calls, timed checks, the call after the timing):
# none of it may tell one kind of call from another.
import sys

import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax


def _seen(x: torch.Tensor) -> tuple:
    return (torch._C._storage_Use_Count(x.untyped_storage()._cdata), sys.getrefcount(x),
            x._version, x._base is None, x._is_view(), x.storage_offset(), x.is_contiguous(),
            x.requires_grad, type(x).__name__)


class ModelNew(nn.Module):
    def forward(self, x):
        sys._ks_test_input_objects.append((_seen(x), id(x)))
        return kernel_softmax(x)
