import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange

from .layers.norm import RMSNorm


class ConvBNReLU(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size=3):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, kernel_size, padding=kernel_size // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_ch)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class ResidualBlock(ConvBNReLU):
    """Indirect nn.Module subclass: resolved through ConvBNReLU."""

    def __init__(self, channels):
        super().__init__(channels, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = super().forward(x)
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


class SelfAttention(nn.Module):
    def __init__(self, dim, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1)) * (c // self.heads) ** -0.5
        attn = attn.softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))


class EinopsMixer(nn.Module):
    """Needs the third-party einops: rejected as not self-contained."""

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return rearrange(self.fc(x), "b n c -> b c n")


class NotImplementedBlock(nn.Module):
    """Extracts fine but never runs: rejected by the execution filter."""

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        raise NotImplementedError("subclasses implement forward")


class PreNormMLP(nn.Module):
    def __init__(self, dim, hidden=64):
        super().__init__()
        self.norm = RMSNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))
