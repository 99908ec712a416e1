# Level 3: one post-norm transformer encoder layer (self-attention + ReLU FFN, dropout 0),
# batch 16, sequence 512, model dim 512, 8 heads, FFN 2048.
# H100 reference time: 1.591 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_model: int, nhead: int, dim_feedforward: int):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0,
                                                batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)


batch = 16
seq_len = 512
d_model = 512
nhead = 8
dim_feedforward = 2048


def get_inputs():
    return [torch.randn(batch, seq_len, d_model)]


def get_init_inputs():
    return [d_model, nhead, dim_feedforward]
