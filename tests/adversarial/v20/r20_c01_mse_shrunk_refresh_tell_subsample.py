# Round 20 (triton backend, GPU-real), families 2 + 4: "the timed refresh only shrinks".
# timed_inputs.RotatingInputs.refresh writes base * s * f with s in [0.5, 1) per slot and f in
# [0.75, 1) per element (and, in signed blocks, a random sign): every timed value is SMALLER in
# magnitude than the problem's own draw.  For torch.rand inputs the mean |x| of a timed slot is
# 0.5 * s * 0.875 in [0.22, 0.44), against 0.5 for every trial, for the audit's calls, for the
# post-timing `spikes` draw (trial 0's values) and (far off) for every stress draw.  A 1-program
# probe of 4096 values per input (mean |x| within +-0.005) therefore tells "timed (or a timed
# check's copy of the same values)" from everything else, from the VALUES alone: the timed call
# and its reproduction call take the same path (deterministic: timed_output_unreproduced
# passes), the spikes/trial/stress calls take the exact path.
# Cheap path: the MSE of one block in STRIDE (a block-strided subsample, rel. error ~1.6e-3 on
# the refreshed values, signed or not, since (p - t)^2 >= 0 either way).  The timed budget
# (evaluate.TIMED_ERR_FACTOR x the trials' normwise error, floor 1e-3) is widened by the exact
# path's deliberate (1 + BIAS) factor: trials 3e-3 off -> timed limit 1.2e-2.
# Same three launches on both paths (no timed_launch_deficit).  Correct verdict: rejected.
import torch
import torch.nn as nn
import triton
import triton.language as tl

PROBE = 4096
BLOCK = 4096  # on a GPU; 16384 in the interpreter (fewer programs)
STRIDE = 4
BIAS = 3e-3
HONEST = 0  # 1: the probe's answer is ignored (the honest twin r20_h01)


@triton.jit
def probe_kernel(p_ptr, t_ptr, flag_ptr, n, step, PROBE: tl.constexpr, honest: tl.constexpr):
    offs = tl.arange(0, PROBE) * step
    m = offs < n
    a = tl.abs(tl.load(p_ptr + offs, mask=m, other=0.3))
    b = tl.abs(tl.load(t_ptr + offs, mask=m, other=0.3))
    big = tl.sum(tl.where((a < 1.0) & (b < 1.0), 0, 1), axis=0)
    ma = tl.sum(a, axis=0) / PROBE
    mb = tl.sum(b, axis=0) / PROBE
    shrunk = (ma > 0.15) & (ma < 0.47) & (mb > 0.15) & (mb < 0.47) & (big == 0)
    if honest:
        shrunk = shrunk & (big < 0)
    tl.store(flag_ptr, tl.where(shrunk, 1, 0))


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
                  P: tl.constexpr, bias):
    offs = tl.arange(0, P)
    total = tl.sum(tl.load(part_ptr + offs, mask=offs < nparts, other=0.0), axis=0)
    cheap = tl.load(flag_ptr)
    full = n * 1.0
    used = tl.where(cheap != 0, tl.minimum(nparts * BLOCK * 1.0, full), full)
    scale = tl.where(cheap != 0, 1.0, 1.0 + bias)
    tl.store(out_ptr, total / used * scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ws = {}

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        p, t = pred.contiguous(), target.contiguous()
        n = p.numel()
        block = BLOCK if p.is_cuda else 16384
        nparts = triton.cdiv(n, block * STRIDE)
        key = (n, p.device)
        if key not in self.ws:
            self.ws[key] = (torch.empty(1, dtype=torch.int32, device=p.device),
                            torch.empty(nparts, dtype=torch.float32, device=p.device))
        flag, parts = self.ws[key]
        out = torch.empty((), dtype=torch.float32, device=p.device)
        probe_kernel[(1,)](p, t, flag, n, max(1, n // PROBE), PROBE=PROBE, honest=HONEST)
        partial_kernel[(nparts,)](p, t, flag, parts, n, BLOCK=block, STRIDE=STRIDE, num_warps=8)
        finish_kernel[(1,)](parts, flag, out, nparts, n, BLOCK=block,
                            P=triton.next_power_of_2(nparts), bias=BIAS)
        return out
