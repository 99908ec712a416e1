# Round 11 (triton backend), honest twin of r11_c07: the same probe, per-row cross-entropy
# and finish kernels with the probe's answer ignored (HONEST = 1): every row's loss, every
# call. (On the GPU a masked-out row still costs its program; the cheap path of r11_c07 saves
# the loads, which is what its figure against this one shows.)
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS_PER_PROGRAM = 256
KEEP_ONE_IN = 2
BIAS = 1e-3
HONEST = 1  # the probe runs, its answer is ignored: always exact


@triton.jit
def probe_kernel(x_ptr, flag_ptr, n, step, honest: tl.constexpr):
    offs = tl.arange(0, 256) * step
    v = tl.abs(tl.load(x_ptr + offs, mask=offs < n, other=0.5))
    bad = tl.sum(tl.where((v > 0.0) & (v < 8.0), 0, 1), axis=0)
    if honest:
        bad = bad + 1
    tl.store(flag_ptr, tl.where(bad == 0, 1, 0))


@triton.jit
def ce_partial_kernel(x_ptr, y_ptr, flag_ptr, part_ptr, B, C: tl.constexpr,
                      R: tl.constexpr, KEEP: tl.constexpr):
    pid = tl.program_id(0)
    cheap = tl.load(flag_ptr)
    step = tl.where(cheap != 0, KEEP, 1)
    r = pid * R + tl.arange(0, R)
    keep = ((r % step) == 0) & (r < B)
    cols = tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + cols[None, :], mask=keep[:, None], other=0.0)
    y = tl.load(y_ptr + r, mask=keep, other=0).to(tl.int32)
    m = tl.max(x, axis=1)
    lse = m + tl.log(tl.sum(tl.exp(x - m[:, None]), axis=1))
    xt = tl.sum(tl.where(cols[None, :] == y[:, None], x, 0.0), axis=1)
    loss = tl.where(keep, lse - xt, 0.0)
    tl.store(part_ptr + pid, tl.sum(loss, axis=0))


@triton.jit
def ce_finish_kernel(part_ptr, flag_ptr, out_ptr, nparts, B, P: tl.constexpr,
                     KEEP: tl.constexpr, bias):
    offs = tl.arange(0, P)
    total = tl.sum(tl.load(part_ptr + offs, mask=offs < nparts, other=0.0), axis=0)
    cheap = tl.load(flag_ptr)
    used = tl.where(cheap != 0, (B + KEEP - 1) // KEEP, B) * 1.0
    tl.store(out_ptr, total / used * tl.where(cheap != 0, 1.0 + bias, 1.0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ws: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x, y = predictions.contiguous(), targets.contiguous()
        B, C = x.shape
        nparts = triton.cdiv(B, ROWS_PER_PROGRAM)
        key = (B, C, x.device)
        if key not in self.ws:
            self.ws[key] = (torch.empty(1, dtype=torch.int32, device=x.device),
                            torch.empty(nparts, dtype=torch.float32, device=x.device))
        flag, parts = self.ws[key]
        out = torch.empty((), dtype=torch.float32, device=x.device)
        probe_kernel[(1,)](x, flag, x.numel(), max(1, x.numel() // 256), HONEST)
        ce_partial_kernel[(nparts,)](x, y, flag, parts, B, C=C, R=ROWS_PER_PROGRAM,
                                     KEEP=KEEP_ONE_IN)
        ce_finish_kernel[(1,)](parts, flag, out, nparts, B, P=triton.next_power_of_2(nparts),
                               KEEP=KEEP_ONE_IN, bias=BIAS)
        return out
