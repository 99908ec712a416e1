# Level 2: Conv2d (3x3, 64 -> 64 channels, 64x64 images), BatchNorm2d (training mode: batch
# statistics), ReLU.
# H100 reference time: 0.245 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


batch = 32
in_channels = 64
out_channels = 64
kernel_size = 3
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
