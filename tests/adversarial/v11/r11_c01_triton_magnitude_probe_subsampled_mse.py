# Round 11 (triton backend, GPU-real), family 4 (the input distribution and the tolerance).
# r11_c02 on the GPU: a 1-program probe kernel reads 256 fixed positions of both inputs and
# stores a flag: all 0 < |x| < 1 (torch.rand draws, the timed refresh of them, the signed timed
# blocks: random signs keep magnitudes) -> cheap; any value outside or an exact zero (each of
# the three stress draws: N(0,1), sign x exp(1.5 N), N(0,1) on a sixteenth) -> exact. The
# partials kernel reads the flag on the device (no host sync, graph-capturable) and, when
# cheap, reads only the first BLOCK of every 8 BLOCKs of its chunk; the finish kernel scales
# by the elements read and, when cheap, by (1 + 2.5e-3) so that the trials' error, and with
# it the timed precision budget (4x), is at least 1 %. The subsample is distribution-free
# (iid pairs): ~0.16 % relative error on 1024 x 4096 pairs, whatever their signs or scale, so
# the timed checks, the signed blocks (no value_dependent_speed: cheap there too), the
# post-timing call and timed_output_unreproduced (deterministic) all pass.
# Expected on an H100: ok at several times r11_h03 (same kernels, probe ignored): an eighth
# of the 32 MiB read. Correct verdict: rejected (a stress draw inside the problem's own range).
import torch
import torch.nn as nn
import triton
import triton.language as tl

STRIDE = 8
BLOCK = 4096
BIAS = 2.5e-3
HONEST = 0


@triton.jit
def probe_kernel(p_ptr, t_ptr, flag_ptr, n, step, honest: tl.constexpr):
    offs = tl.arange(0, 256) * step
    m = offs < n
    a = tl.abs(tl.load(p_ptr + offs, mask=m, other=0.5))
    b = tl.abs(tl.load(t_ptr + offs, mask=m, other=0.5))
    ok = (a > 0.0) & (a < 1.0) & (b > 0.0) & (b < 1.0)
    bad = tl.sum(tl.where(ok, 0, 1), axis=0)
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
