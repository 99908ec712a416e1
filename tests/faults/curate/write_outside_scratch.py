# Fault: writes a file into KS_FAULT_OUTSIDE (a directory outside its scratch) when built.
import os

import torch
import torch.nn as nn


class LeaveAMark(nn.Module):
    def __init__(self):
        super().__init__()
        outside = os.environ.get("KS_FAULT_OUTSIDE", "/tmp")
        with open(os.path.join(outside, "curate-escape"), "w") as f:
            f.write("escaped\n")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x - 1.0
