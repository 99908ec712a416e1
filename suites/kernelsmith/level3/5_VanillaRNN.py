# Level 3: Elman RNN (tanh) unrolled over 32 steps: h_t = tanh(W_ih x_t + W_hh h_{t-1} + b),
# output = Linear(h_T); batch 512, input 256, hidden 1024, output 256.
# H100 reference time: 1.693 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.i2h = nn.Linear(input_size, hidden_size)
        self.h2h = nn.Linear(hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        h = h0
        for t in range(x.shape[0]):
            h = torch.tanh(self.i2h(x[t]) + self.h2h(h))
        return self.h2o(h)


seq_len = 32
batch = 512
input_size = 256
hidden_size = 1024
output_size = 256


def get_inputs():
    return [torch.randn(seq_len, batch, input_size), torch.randn(batch, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
