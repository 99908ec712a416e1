# Test candidate (cpu backend): a SIGALRM handler and an interval timer installed at import; the
# handler runs at any moment of the evaluation and is handed the interrupted frame.
import signal

import torch.nn as nn

from softmax_cpp import kernel_softmax

_seen = []
signal.signal(signal.SIGALRM, lambda sig, frame: _seen.append(frame.f_back))
signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)


class ModelNew(nn.Module):
    def forward(self, x):
        return kernel_softmax(x)
