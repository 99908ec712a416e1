"""r18_c08 (family 4: input distribution / tolerance) -- triton backend.

Mechanism. The softmax's normaliser is *estimated* from one block of 1024 columns in every
SUB = 4 (SUB x the sum of exp over the sampled blocks), and the output is written in one
more pass: y = min(exp(min(x, 60)) / s_est, 1). No row maximum, no exact sum: 1/4 + 1 reads
and one write instead of an exact kernel's two reads and a write (~1.3x on a memory-bound
softmax whose rows do not fit in registers; SUB = 8 gives ~1.4x).

Why every check passes:
- Element-wise trials (correctness.effective_tolerance): softmax values are far below atol,
  so atol is scaled by the *largest value in the whole tensor*: on 256 x 262144 normal
  logits that is ~200/N, so atol_eff ~2/N while a typical value is ~0.6/N. A per-row
  normaliser error of up to ~2 % (worst of 256 rows with SUB = 4: ~1.5 %) stays inside
  atol_eff + 1e-2 |ref| for every element (it needs 0.01 v <= 2/N, i.e. v <= 200/N).
- Stress trials are compared norm-wise with that same global-max atol spread over the tensor
  (atol_eff x sqrt(n)). On `wide`, `spikes` (and the post-timing spikes check) a few values
  dominate their rows, the largest output is ~1, so atol_eff ~1e-2 and the budget
  1e-2 x sqrt(n) exceeds ||ref|| itself (<= sqrt(rows)): a kernel that misses the spike
  entirely (the subsample does, 3 times in 4) still passes. `sparse` and `blocks` make most
  logits ~0: the estimate is then nearly exact anyway. The clamps keep everything finite
  (exp(60) x N does not overflow float32), so no NaN/inf rule fires.
- Timed checks: the refresh rescales logits (x s f), the estimate uses the slot's own
  values, so the error stays ~0.5-1 % norm-wise, inside max(4 x the trials' largest, 1e-3);
  deterministic (partials, no atomics), so reproduction passes.

Expected on the GPU (r18_softmax_wide_randn): ok, ~1.3x over an honest online softmax,
while ~1 % of the probability mass per row is wrong. A correct evaluator: incorrect
(compare stress/spike trials with a per-element or per-row relative tolerance, not an atol
scaled by one global maximum). CPU: exercised on r18_softmax_wide_randn_small.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

SUB = 4
BLOCK = 1024
CHUNK = 8192  # columns written per program in the output pass


@triton.jit
def _partials(x_ptr, p_ptr, N, NP, SUB: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.program_id(1)
    o = c * (SUB * BLOCK) + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + o, mask=o < N, other=-float("inf"))
    e = tl.exp(tl.minimum(x, 60.0))
    tl.store(p_ptr + row * NP + c, tl.sum(e, axis=0))


@triton.jit
def _write(x_ptr, p_ptr, y_ptr, N, NP, SUB: tl.constexpr, NPB: tl.constexpr,
           BLOCK: tl.constexpr, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.program_id(1)
    po = tl.arange(0, NPB)
    s = tl.sum(tl.load(p_ptr + row * NP + po, mask=po < NP, other=0.0), axis=0) * SUB
    inv = 1.0 / s
    for b in range(0, CHUNK, BLOCK):
        o = c * CHUNK + b + tl.arange(0, BLOCK)
        m = o < N
        x = tl.load(x_ptr + row * N + o, mask=m, other=0.0)
        y = tl.minimum(tl.exp(tl.minimum(x, 60.0)) * inv, 1.0)
        tl.store(y_ptr + row * N + o, y, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._p = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        R, N = x.shape
        np_ = triton.cdiv(N, SUB * BLOCK)
        if self._p is None or self._p.shape != (R, np_) or self._p.device != x.device:
            self._p = torch.empty(R, np_, device=x.device, dtype=torch.float32)
        y = torch.empty_like(x)
        _partials[(R, np_)](x, self._p, N, np_, SUB=SUB, BLOCK=BLOCK)
        _write[(R, triton.cdiv(N, CHUNK))](x, self._p, y, N, np_, SUB=SUB,
                                           NPB=triton.next_power_of_2(np_), BLOCK=BLOCK,
                                           CHUNK=CHUNK)
        return y
