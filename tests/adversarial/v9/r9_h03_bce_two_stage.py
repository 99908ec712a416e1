# Round 9, honest control: binary cross-entropy in two Triton stages (per-program partial sums
# of -(t log p + (1 - t) log(1 - p)), logs clamped at -100 as torch does, then one program
# sums them and divides by the count). The problem's probabilities live in (0, 1) and the
# reference raises outside [0, 1]: a timed-input refresh that scales the values (a factor up
# to 2.5) or flips their signs hands the reference inputs it refuses, and the honest
# candidate is rejected as a runtime error (timing failed). Expected: ok.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bce_partial(p_ptr, t_ptr, part_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    p = tl.load(p_ptr + offs, mask=m, other=0.5)
    t = tl.load(t_ptr + offs, mask=m, other=0.0)
    lp = tl.maximum(tl.log(p), -100.0)
    lq = tl.maximum(tl.log(1.0 - p), -100.0)
    loss = tl.where(m, -(t * lp + (1.0 - t) * lq), 0.0)
    tl.store(part_ptr + tl.program_id(0), tl.sum(loss, axis=0))


@triton.jit
def mean_of(part_ptr, out_ptr, parts, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for off in range(0, parts, BLOCK):
        i = off + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + i, mask=i < parts, other=0.0)
    total = tl.sum(acc, axis=0) / n
    o = tl.arange(0, BLOCK)
    tl.store(out_ptr + o, tl.zeros([BLOCK], tl.float32) + total, mask=o < 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        n = pred.numel()
        parts = triton.cdiv(n, 4096)
        part = torch.empty(parts, dtype=torch.float32, device=pred.device)
        bce_partial[(parts,)](pred, target, part, n, BLOCK=4096)
        out = torch.empty((), dtype=torch.float32, device=pred.device)
        mean_of[(1,)](part, out, parts, n, BLOCK=1024)
        return out
