# Adversarial corpus problem (round 8): r8_block_sparse_row_sum at interpreter size, 64 x 8192
# fp32 with 128-column blocks, 1 in 16 nonzero (same blocks for every row, fresh per draw).
import torch
import torch.nn as nn

ROWS, COLS, BLOCK, KEEP = 64, 8192, 128, 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    blocks = COLS // BLOCK
    keep = torch.randperm(blocks)[: blocks // KEEP]
    mask = torch.zeros(blocks)
    mask[keep] = 1.0
    x = torch.randn(ROWS, COLS) * mask.repeat_interleave(BLOCK)[None, :]
    return [x]


def get_init_inputs():
    return []
