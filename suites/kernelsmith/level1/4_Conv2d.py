# Level 1: 2-D convolution, 3x3 kernel, stride 1, padding 1, 64 -> 128 channels on 64x64 images.
# H100 reference time: 0.201 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch = 32
in_channels = 64
out_channels = 128
kernel_size = 3
height = 64
width = 64


def get_inputs():
    return [torch.randn(batch, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
