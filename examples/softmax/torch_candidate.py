# A candidate that "wins" by calling PyTorch instead of writing a kernel.
# kernelsmith eval rejects it (status hacked, finding torch_compute); kept as a demo.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    # EVOLVE-BLOCK-START
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)
    # EVOLVE-BLOCK-END
