# Adversarial corpus problem (round 8): r8_masked_row_mean at interpreter size, x (64, 2048)
# fp32 and a key-padding mask (True for the first L_b positions, L_b uniform in [1, 2048]).
import torch
import torch.nn as nn

B, T = 64, 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask.to(x.dtype)
        return (x * m).sum(dim=1) / m.sum(dim=1)


def get_inputs():
    lengths = torch.randint(1, T + 1, (B,))
    mask = torch.arange(T)[None, :] < lengths[:, None]
    return [torch.randn(B, T), mask]


def get_init_inputs():
    return []
