# Round 7, family 3 (remembering instead of computing) through the timed-check sampling rule,
# eager timing. GPU only (CUDA timing).
# Target: timing_blocks._checkable with the events fallback (timing_cuda._EagerRunner). The
# timed inputs are fixed tensor objects, one per slot (timed_inputs.RotatingInputs: the same
# objects every sample, new values written into them), and a sample always calls slot k-1
# first and slot 0 last, then synchronizes and refreshes. With one shared output buffer only
# the last call's output is ever compared (_checkable keeps only calls whose storage no later
# call overwrote). Forward learns which object ends a sample (the one after which a host gap
# of > 300 us follows) and, for every slot object seen more than 3 times that never ended a
# sample, launches its kernel with skip=1 (it returns at once). The launch count per call is
# unchanged (timed_account.BlockAccount / gpu_profile.timed_findings count launches, not
# work). Fresh objects (trials, stress, audit, cached_output's two calls) and the sample-ending
# object (timed checks, post_timing_finding on slot 0) always compute. Eager timing is
# forced by a host read only while capturing (info not_graph_capturable, accepted).
# Expected if it passes (H100, 4096x4096 softmax, k up to 100): status ok, no reject finding,
# speedup ~5-15x for a kernel honestly ~1x.
import time
import weakref

import torch
import torch.nn as nn
import triton
import triton.language as tl

_GAP_S = 300e-6


@triton.jit
def softmax_rows_or_skip(x_ptr, y_ptr, skip, N, sx, sy, BLOCK: tl.constexpr):
    if skip != 0:
        return
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * sx + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * sy + cols, e / tl.sum(e, axis=0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.outs = {}
        self.seen = {}  # id(x) -> [weakref, calls, times followed by a host gap]
        self.prev = None
        self.prev_t = 0.0
        self.flag = None

    def _note(self, x):
        now = time.perf_counter()
        if self.prev is not None and now - self.prev_t > _GAP_S and self.prev in self.seen:
            self.seen[self.prev][2] += 1
        key = id(x)
        if key not in self.seen:
            self.seen[key] = [weakref.ref(x, lambda _r, k=key: self.seen.pop(k, None)), 0, 0]
        entry = self.seen[key]
        entry[1] += 1
        self.prev = key
        return entry

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.flag is None:
            self.flag = torch.zeros(1, device=x.device)
        if x.is_cuda and torch._C._cuda_isCurrentStreamCapturing():
            self.flag.item()  # a host read: cannot be captured, timed eagerly
        entry = self._note(x)
        calls, ends = entry[1], entry[2]
        skip = 1 if calls > 3 and ends == 0 else 0  # never ended a sample
        M, N = x.shape
        key = (M, N, x.dtype, x.device)
        if key not in self.outs:
            self.outs[key] = torch.empty((M, N), dtype=x.dtype, device=x.device)
        y = self.outs[key]
        softmax_rows_or_skip[(M,)](x, y, skip, N, x.stride(0), y.stride(0),
                                   BLOCK=triton.next_power_of_2(N))
        self.prev_t = time.perf_counter()
        return y
