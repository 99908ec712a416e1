# Round 21 (cpu backend), cheat: the CPU timing checks only the last call of a sample when
# the calls' outputs share memory, and nothing rejects outputs that come to share memory.
#
# timing._time_cpu -> check_sample -> timing_blocks._checkable: a call whose output a later
# call of the sample overwrote is not checkable, so when every timed call returns one
# persistent buffer only call 0 (run last) is compared. The CUDA timing defends exactly this
# (timing_cuda._time_cuda: `_checkable < k` -> one call a sample, `aliasing_appeared` ->
# reject timed_output_aliasing); the CPU timing has neither.
# Tell (no storage use count, no object identity: survives inputs.present): the timed slots
# are fixed allocations refreshed in place, so their addresses repeat every sample, and the
# calls of one sample run back to back (tens of microseconds apart), while a sample's last
# call is always followed by a check, a refresh or a reference sample (milliseconds).
# So: a call on an address seen before returns one persistent output tensor, and computes
# nothing when its address is "not last": one whose call was, earlier, followed by a call on
# another repeated address within GAP_S. Errors go the safe way only: an address never seen
# followed quickly computes. The checks' copies never repeat an address (held, spacers):
# they compute into a fresh output. The post-timing call reads slot 0 (the last call of a
# sample): it computes. Every checked output, every trial, audit and stress output is exact.
# A sample's first call sleeps IDLE_S: samples of near-empty calls are so short (~0.5 ms) that the
# CPU-demand figure (cpu_account) read 1.47-1.51 threads on the loaded VM (its own clock
# reads), a cpu_threads_over_budget reject; off-CPU time dilutes it.
# Expected from a correct evaluator: rejected (timed_output_aliasing) or timed at one call a
# sample.
import time

import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
extern "C" void rowsum(const float* x, float* y, int64_t R, int64_t C) {
  for (int64_t r = 0; r < R; ++r) {
    const float* p = x + r * C;
    float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t c = 0;
    for (; c + 8 <= C; c += 8)
      for (int u = 0; u < 8; ++u) a[u] += p[c + u];
    float s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    for (; c < C; ++c) s += p[c];
    y[r] = s;
  }
}
"""
_lib = cpu_ext.load(name="r21_rowsum", source=CPP,
                    functions={"rowsum": "void(const float*, float*, int64, int64)"})
_clock = time.perf_counter
_sleep = time.sleep
IDLE_S = 2e-5
GAP_S = 3e-4
CHEAT = True


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._shared = None
        self._prev = None  # (ptr, end time) of the last timed call
        self._not_last = set()
        self._seen = {}  # address -> calls seen

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        r, c = x.shape
        now, ptr = _clock(), x.data_ptr()
        seen = self._seen.get(ptr, 0)
        self._seen[ptr] = seen + 1
        if self._prev is not None and self._prev[0] != ptr and now - self._prev[1] < GAP_S \
                and seen:
            self._not_last.add(self._prev[0])
        if not seen:  # a new address: trials, audit, the checks' copies, a sample's first
            y = torch.empty(r, dtype=torch.float32)
            _lib.rowsum(x, y, r, c)
            self._prev = (ptr, _clock())
            return y
        if self._shared is None or self._shared.shape[0] != r:
            self._shared = torch.empty(r, dtype=torch.float32)
        if not (CHEAT and ptr in self._not_last):
            _lib.rowsum(x, self._shared, r, c)
        elif self._prev is not None and now - self._prev[1] >= GAP_S:  # a sample's first
            _sleep(IDLE_S)  # call: off the CPU a moment (see above)
        self._prev = (ptr, _clock())
        return self._shared
