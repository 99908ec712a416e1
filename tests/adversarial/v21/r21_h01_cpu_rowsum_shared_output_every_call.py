# Round 21 (cpu backend), honest control for r21_c01: the same C++ row sum and the same
# persistent output buffer returned by every timed call (a static output, as a CUDA-graph
# style program keeps one), but every call computes. The slot bookkeeping runs and is never
# used. A fix of c01 that times the CPU at one call a sample where outputs share memory (as
# CUDA does) must still accept it, and a fix that rejects outputs sharing memory across
# calls would reject it (the CUDA timing rejects only outputs that *came to* share memory
# after the sample size was chosen). Expected: ok (about 1x the reference's speed or less).
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
GAP_S = 3e-4
CHEAT = False


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
        self._prev = (ptr, _clock())
        return self._shared
