# Adversarial corpus problem (round 23): torch.polar, as rotary embeddings build their complex
# rotations (freqs_cis = polar(ones, angles)): magnitudes U[0.5, 1.5) and angles N(0, 3^2)
# of shape (256, 1024) fp32, a complex64 output. Sized for the cpu backend (a fraction of a
# millisecond a call, so a CPU timing sample holds several calls).
import torch
import torch.nn as nn

R, C = 256, 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, magnitude: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
        return torch.polar(magnitude, angle)


def get_inputs():
    return [torch.rand(R, C) + 0.5, torch.randn(R, C) * 3.0]


def get_init_inputs():
    return []
