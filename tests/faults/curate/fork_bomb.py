# Fault: forks exponentially in forward (2^10 processes unless stopped; bounded so a broken
# sandbox cannot take the machine down), each of them then sleeping.
import os
import time

import torch
import torch.nn as nn


class Multiply(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(10):
            os.fork()
        time.sleep(600)
        return x * 2.0
