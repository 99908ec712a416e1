# Round 10 (triton backend), honest twin of r10_c06: the MSE loss in two Triton kernels, a
# fixed grid of programs each reducing its strided share of (p - t)^2 into a partials
# workspace allocated once (per device and grid) and reused by every call, then one program
# summing the partials in a fixed order (deterministic, no atomics) and dividing by n.
import torch
import torch.nn as nn
import triton
import triton.language as tl

PROGRAMS = 256


@triton.jit
def partial_sq(p_ptr, t_ptr, part_ptr, n, BLOCK: tl.constexpr, PROGS: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(pid * BLOCK, n, PROGS * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < n
        d = tl.load(p_ptr + offs, mask=m, other=0.0) - tl.load(t_ptr + offs, mask=m, other=0.0)
        acc += d * d
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def finish(part_ptr, out_ptr, inv_n, PROGS: tl.constexpr):
    parts = tl.load(part_ptr + tl.arange(0, PROGS))
    tl.store(out_ptr, tl.sum(parts, axis=0) * inv_n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._partials: dict[torch.device, torch.Tensor] = {}

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        p, t = pred.contiguous(), target.contiguous()
        part = self._partials.get(p.device)
        if part is None:
            part = torch.empty(PROGRAMS, dtype=torch.float32, device=p.device)
            self._partials[p.device] = part
        out = torch.empty((), dtype=p.dtype, device=p.device)
        n = p.numel()
        partial_sq[(PROGRAMS,)](p, t, part, n, BLOCK=1024, PROGS=PROGRAMS)
        finish[(1,)](part, out, 1.0 / n, PROGS=PROGRAMS)
        return out
