# Round 3: magnitude spectrum of a batch of real signals (torch.fft: cuFFT on the GPU);
# the interpreter-sized copy of r3_rfft_abs.py (64 signals).
import torch
import torch.nn as nn

B, N = 64, 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fft.rfft(x, dim=-1).abs()


def get_inputs():
    return [torch.randn(B, N)]


def get_init_inputs():
    return []
