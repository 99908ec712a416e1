# Adversarial corpus problem (round 8): mean over the valid positions of padded sequences,
# x (1024, 16384) fp32 and a key-padding mask (bool, True for the first L_b positions of row
# b, L_b uniform in [1, 16384]): the pooling of variable-length sequences. The reference
# multiplies by the mask and sums in torch (reads x, the mask, writes and reads the product).
import torch
import torch.nn as nn

B, T = 1024, 16384


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
