# Level 3: multi-head self-attention (fused QKV projection, softmax(QK^T / sqrt(d)) V, output
# projection); batch 16, sequence 1024, model dim 512, 8 heads.
# H100 reference time: 2.557 ms (CUDA graph replay median, 2026-11-22)
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, e = x.shape
        qkv = self.qkv(x).reshape(b, s, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # (b, heads, s, head_dim)
        att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v)  # (b, heads, s, head_dim)
        y = y.transpose(1, 2).reshape(b, s, e)
        return self.out(y)


batch = 16
seq_len = 1024
embed_dim = 512
num_heads = 8


def get_inputs():
    return [torch.randn(batch, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads]
