# Round 7, family 3 (remembering instead of computing) through the timed-check sampling rule.
# GPU only (CUDA graph timing).
# Target: timing_blocks._checkable. A sample is k calls captured in one CUDA graph; a timed
# check compares one call's output, chosen among the calls "whose output no later call
# overwrote" (storage pointer), because a kernel that reuses one output buffer (an accepted
# pattern: h04_preallocated_output) leaves only the last call's values. So with one shared
# output buffer only call 0 (the last captured, reading slot 0) is ever checked.
# Each call's kernel takes a call id baked into the graph and returns at once when a device
# flag skip[id] is set. Capture is recognised with torch._C._cuda_isCurrentStreamCapturing
# (the static scan lists only is_current_stream_capturing). At the first eager call after a
# capture (timing_cuda._graph_reproduces' own eager fn(0), before its replay) forward sets
# skip[] for every captured id but the last of the run, so every replay computes call 0 only;
# the others still launch (the launch accounting of timed_account.timed_sample_kernels sees k
# launches per sample) but do nothing. Eager calls (trials, audit, post-timing check) always
# compute. Graph check, timed checks, signed blocks, steady blocks: all read call 0.
# Expected if it passes (H100, 4096x4096 softmax, k ~ 32): status ok, no finding, speedup
# ~10x for a kernel honestly ~1x.
import torch
import torch.nn as nn
import triton
import triton.language as tl

_IDS = 1 << 22


@triton.jit
def softmax_rows_skippable(x_ptr, y_ptr, skip_ptr, call_id, N, sx, sy, BLOCK: tl.constexpr):
    if tl.load(skip_ptr + call_id) != 0:
        return
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * sx + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * sy + cols, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def mark_range(skip_ptr, lo, hi, BLOCK: tl.constexpr):
    i = lo + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(skip_ptr + i, 1, mask=i < hi)


def _capturing(x):
    return x.is_cuda and torch._C._cuda_isCurrentStreamCapturing()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.skip = None
        self.outs = {}
        self.next_id = 0
        self.run = None  # [first id, last id] of the captured calls since the last eager call

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        if self.skip is None:
            self.skip = torch.zeros(_IDS, dtype=torch.int32, device=x.device)
        key = (M, N, x.dtype)
        if key not in self.outs:
            self.outs[key] = torch.empty_like(x)
        y = self.outs[key]  # one buffer for every call: only the last call is checkable
        call_id = self.next_id % _IDS
        self.next_id += 1
        if _capturing(x):
            self.run = [call_id, call_id] if self.run is None else [self.run[0], call_id]
        elif self.run is not None:
            lo, hi = self.run  # all captured calls but the last one skip their work
            if hi > lo:
                mark_range[(triton.cdiv(hi - lo, 1024),)](self.skip, lo, hi, BLOCK=1024)
            self.run = None
        softmax_rows_skippable[(M,)](x, y, self.skip, call_id, N, x.stride(0), y.stride(0),
                                     BLOCK=triton.next_power_of_2(N))
        return y
