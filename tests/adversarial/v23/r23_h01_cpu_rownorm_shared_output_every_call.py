# Round 23 (cpu backend), honest twin of r23_c01: the same one-pass row L2 norm returning one
# persistent output buffer from every call, computed on every call (CHEAT = False); the
# same busy-wait padding of calls on the previous call's address (warm-up, audit loop), so
# it is timed at the same k = 2. Changes no output. Expected: ok.
import time

import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
#include <cmath>
extern "C" void rownorm(const float* x, float* y, int64_t R, int64_t C) {
  for (int64_t r = 0; r < R; ++r) {
    const float* p = x + r * C;
    float a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t c = 0;
    for (; c + 16 <= C; c += 16)
      for (int u = 0; u < 16; ++u) a[u] += p[c + u] * p[c + u];
    float s = 0.0f;
    for (int u = 0; u < 16; ++u) s += a[u];
    for (; c < C; ++c) s += p[c] * p[c];
    y[r] = std::sqrt(s);
  }
}
"""
_lib = cpu_ext.load(name="r23_rownorm_h", source=CPP,
                    functions={"rownorm": "void(const float*, float*, int64, int64)"})
_clock = time.perf_counter
CHEAT = False
PAD = True
GAP_S = 3e-4  # call 0 follows call 1 within this
REPEATS = 16  # a timed slot: an address called more than this many times
WARM_S = 8e-4  # a call on the previous call's address lasts at least this long


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._buf = None
        self._seen = {}  # input address -> calls
        self._prev = None  # (address, end time) of the previous call

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        r, c = x.shape
        t0, ptr = _clock(), x.data_ptr()
        seen = self._seen[ptr] = self._seen.get(ptr, 0) + 1
        prev = self._prev
        if self._buf is None or self._buf.shape[0] != r:
            self._buf = torch.empty(r, dtype=torch.float32)
        call0 = prev is not None and prev[0] != ptr and t0 - prev[1] < GAP_S \
            and seen > REPEATS and self._seen.get(prev[0], 0) > REPEATS
        if not (CHEAT and call0):
            _lib.rownorm(x, self._buf, r, c)
            if PAD and prev is not None and prev[0] == ptr:
                while _clock() - t0 < WARM_S:
                    pass
        self._prev = (ptr, _clock())
        return self._buf
