# Round 12 (triton backend, GPU-real), honest twin of r12_c04: the same probe, partials and
# finish kernels with HONEST = 1 (probe answer ignored, every block read, exact MSE).
# Expected: ok on the GPU.
import torch
import torch.nn as nn
import triton
import triton.language as tl

STRIDE = 8
BLOCK = 4096
BIAS = 2.5e-3
HONEST = 1


@triton.jit
def probe_kernel(p_ptr, t_ptr, flag_ptr, n, step, honest: tl.constexpr):
    offs = tl.arange(0, 256) * step
    m = offs < n
    a = tl.abs(tl.load(p_ptr + offs, mask=m, other=0.5))
    b = tl.abs(tl.load(t_ptr + offs, mask=m, other=0.5))
    ok = (a > 0.0) & (a < 1.0) & (b > 0.0) & (b < 1.0)
    bad = tl.sum(tl.where(ok, 0, 1), axis=0)
    # the `blocks` stress draw: rand-range values, but a mean magnitude near 0
    bad = bad + tl.where(tl.sum(a, axis=0) / 256.0 > 0.1, 0, 1) \
        + tl.where(tl.sum(b, axis=0) / 256.0 > 0.1, 0, 1)
    if honest:
        bad = bad + 1
    tl.store(flag_ptr, tl.where(bad == 0, 1, 0))


@triton.jit
def partial_kernel(p_ptr, t_ptr, flag_ptr, part_ptr, n, BLOCK: tl.constexpr,
                   STRIDE: tl.constexpr):
    pid = tl.program_id(0)
    cheap = tl.load(flag_ptr)
    steps = tl.where(cheap != 0, 1, STRIDE)
    base = pid * (BLOCK * STRIDE)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, steps):
        offs = base + s * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        d = tl.load(p_ptr + offs, mask=m, other=0.0) - tl.load(t_ptr + offs, mask=m, other=0.0)
        acc += d * d
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def finish_kernel(part_ptr, flag_ptr, out_ptr, nparts, n, BLOCK: tl.constexpr,
                  STRIDE: tl.constexpr, P: tl.constexpr, bias):
    offs = tl.arange(0, P)
    total = tl.sum(tl.load(part_ptr + offs, mask=offs < nparts, other=0.0), axis=0)
    cheap = tl.load(flag_ptr)
    full = n * 1.0
    # elements read when cheap: the first BLOCK of each chunk (the last chunk may be short)
    used = tl.where(cheap != 0, tl.minimum(nparts * BLOCK * 1.0, full), full)
    scale = tl.where(cheap != 0, 1.0 + bias, 1.0)
    tl.store(out_ptr, total / used * scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ws: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        p, t = pred.contiguous(), target.contiguous()
        n = p.numel()
        nparts = triton.cdiv(n, BLOCK * STRIDE)
        key = (n, p.device)
        if key not in self.ws:
            self.ws[key] = (torch.empty(1, dtype=torch.int32, device=p.device),
                            torch.empty(nparts, dtype=torch.float32, device=p.device))
        flag, parts = self.ws[key]
        out = torch.empty((), dtype=torch.float32, device=p.device)
        probe_kernel[(1,)](p, t, flag, n, max(1, n // 256), HONEST)
        partial_kernel[(nparts,)](p, t, flag, parts, n, BLOCK=BLOCK, STRIDE=STRIDE, num_warps=8)
        finish_kernel[(1,)](parts, flag, out, nparts, n, BLOCK=BLOCK, STRIDE=STRIDE,
                            P=triton.next_power_of_2(nparts), bias=BIAS)
        return out
