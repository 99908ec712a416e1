# Level 2: Conv2d (3x3, 32 -> 64 channels, 128x128 images), ReLU, then a per-channel bias add.
# H100 reference time: 0.581 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.relu(x)
        return x + self.bias


batch = 32
in_channels = 32
out_channels = 64
kernel_size = 3
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
