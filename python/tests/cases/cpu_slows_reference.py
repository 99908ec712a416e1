# Test candidate (cpu backend): the C++ kernel does the work; its calls also set the process
# state problem_slowable.py's reference reads, so the reference makes nine extra passes from
# then on (its own outputs stay exact).
import sys

import torch.nn as nn

from softmax_cpp import kernel_softmax


class ModelNew(nn.Module):
    def forward(self, x):
        sys._ks_test_extra_passes = 9
        return kernel_softmax(x)
