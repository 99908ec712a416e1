# Level 3: 3-layer MLP with ReLU (1024 -> 4096 -> 4096 -> 1024) on 4096 rows.
# H100 reference time: 4.138 ms (CUDA graph replay median, 2026-11-22)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, hidden_sizes: list, out_features: int):
        super().__init__()
        layers = []
        current = in_features
        for h in hidden_sizes:
            layers.append(nn.Linear(current, h))
            layers.append(nn.ReLU())
            current = h
        layers.append(nn.Linear(current, out_features))
        self.network = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


batch = 4096
in_features = 1024
hidden_sizes = [4096, 4096]
out_features = 1024


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, hidden_sizes, out_features]
