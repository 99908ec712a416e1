# Round 21 (triton), cheat: r21_c02's support probe as Triton kernels (no host sync: graph
# capturable). The stress trials and the timed refresh keep every zero of the problem's own
# draw (stress._redraw keeps t != 0; blocks/spikes only rescale; timed_inputs._mix mixes
# only chunks that are all non-zero in both draws), so a kernel that infers the sparsity
# structure from row 0 and skips the rest is exact on every value the evaluator shows.
#
# Problem r8_block_sparse_row_sum (2048 x 32768, 512-column blocks, 1 in 16 non-zero, the
# same blocks for every row; interpreter size: r8_block_sparse_row_sum_small, 64 x 8192,
# 128-column blocks). Kernel 1 (one program) classifies row 0's NB = 64 blocks: all
# non-zero (1), all zero (0) or mixed (2), and stores whether any is mixed. Kernel 2 (one
# program a row) loads each block's first element and the whole block only where row 0's
# block is non-zero, or the row's first element is, or any block was mixed (masked loads:
# on a GPU the masked-off lanes read nothing): 1/16 of the bytes plus 64 gathered words a
# row. The `sparse` stress trial (random zeros) makes row 0's blocks mixed -> every block
# read. Wrong on any input whose rows do not share row 0's zero blocks.
# Expected from a correct evaluator: incorrect (a stress trial whose zeros are not the
# draw's). GPU: ~several x r8_h01b; the interpreter shows no gain (its time is per op).
import torch
import torch.nn as nn
import triton
import triton.language as tl

NB = 64  # blocks a row (both problem sizes)
PROBE = 1


@triton.jit
def _probe(x_ptr, flags_ptr, B: tl.constexpr, NBK: tl.constexpr, CB: tl.constexpr):
    worst = tl.zeros([CB], dtype=tl.int32)
    for b0 in range(0, NBK, CB):
        blk = b0 + tl.arange(0, CB)
        offs = blk[:, None] * B + tl.arange(0, B)[None, :]
        v = tl.load(x_ptr + offs)
        nz = tl.sum((v != 0).to(tl.int32), axis=1)
        flag = tl.where(nz == B, 1, tl.where(nz == 0, 0, 2))
        tl.store(flags_ptr + blk, flag)
        worst = tl.maximum(worst, flag)
    tl.store(flags_ptr + NBK, tl.max(worst, axis=0))


@triton.jit
def _rowsum(x_ptr, flags_ptr, y_ptr, sx, B: tl.constexpr, NBK: tl.constexpr,
            CB: tl.constexpr, PROBE_ON: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * sx
    bad = tl.load(flags_ptr + NBK)
    acc = tl.zeros([CB, B], dtype=tl.float32)
    for b0 in range(0, NBK, CB):
        blk = b0 + tl.arange(0, CB)
        f = tl.load(flags_ptr + blk)
        first = tl.load(base + blk * B)
        live = (f == 1) | (first != 0) | (bad == 2) | (PROBE_ON == 0)
        offs = blk[:, None] * B + tl.arange(0, B)[None, :]
        acc += tl.load(base + offs, mask=live[:, None], other=0.0)
    tl.store(y_ptr + row, tl.sum(tl.sum(acc, axis=1), axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        m, n = x.shape
        b = n // NB
        y = torch.empty(m, dtype=x.dtype, device=x.device)
        flags = torch.empty(NB + 1, dtype=torch.int32, device=x.device)
        cb = max(1, min(NB, 2048 // b))
        _probe[(1,)](x, flags, B=b, NBK=NB, CB=cb)
        _rowsum[(m,)](x, flags, y, x.stride(0), B=b, NBK=NB, CB=cb, PROBE_ON=PROBE)
        return y
