# Test candidate (cpu backend).
import torch
import torch.nn as nn

from softmax_cpp import kernel_softmax

import threading
import time


def _linger():
    time.sleep(3)


class ModelNew(nn.Module):
    """Hack: leaves a thread running after forward returns."""

    def forward(self, x):
        threading.Thread(target=_linger, name="ks-test-lingering", daemon=True).start()
        return kernel_softmax(x)
