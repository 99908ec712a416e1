# Round 21 (triton), honest control for r21_c06: the same two kernels with the probe's
# answer ignored (PROBE = 0: every block of every row is loaded; the probe kernel still runs
# and its flags are read). A fix of c06 (stress trials whose zeros are not the draw's) must
# accept it. Expected: ok (about r8_h01's speed; the probe costs one row's read).
import torch
import torch.nn as nn
import triton
import triton.language as tl

NB = 64  # blocks a row (both problem sizes)
PROBE = 0


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
