# Fault: opens a TCP connection to a loopback listener on port KS_FAULT_PORT when built.
import os
import socket

import torch
import torch.nn as nn


class PhoneHome(nn.Module):
    def __init__(self):
        super().__init__()
        port = int(os.environ.get("KS_FAULT_PORT", "9"))
        socket.create_connection(("127.0.0.1", port), timeout=5).close()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 3.0
