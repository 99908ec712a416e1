# Round 22 (cpu backend), cheat: r21_c05's prefix-mask binary search, switched on only for
# inputs at addresses it has seen before. The trials, the audit and the stress trials hand it
# new memory, or memory the allocator hands back a few times (it reads the whole mask there and is exact on any mask, a broken structure
# included); the timed slots are fixed allocations refreshed in place, so once an address has
# been called more than 16 times it binary-searches the mask's length. Against the stress draws that break a
# structure changing between draws, this is the variant they cannot see: the timed
# refresh, the timed checks (they compare the timed calls' own outputs) and the post-timing
# draw (written into slot 0's memory) must. Expected: rejected.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
static float sum_prefix(const float* p, int64_t n) {
  float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t c = 0;
  for (; c + 8 <= n; c += 8)
    for (int u = 0; u < 8; ++u) a[u] += p[c + u];
  float s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  for (; c < n; ++c) s += p[c];
  return s;
}
extern "C" void masked_mean(const float* x, const bool* m, float* y, int64_t R, int64_t C,
                            int64_t search) {
  for (int64_t r = 0; r < R; ++r) {
    const float* p = x + r * C;
    const bool* q = m + r * C;
    if (search) {
      int64_t lo = 0, hi = C;  // first index whose mask is false (prefix masks)
      while (lo < hi) { int64_t mid = (lo + hi) / 2; if (q[mid]) lo = mid + 1; else hi = mid; }
      y[r] = sum_prefix(p, lo) / (float)lo;
      continue;
    }
    float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t cnt = 0, c = 0;
    for (; c + 8 <= C; c += 8)
      for (int u = 0; u < 8; ++u) { a[u] += q[c + u] ? p[c + u] : 0.0f; cnt += q[c + u]; }
    float s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    for (; c < C; ++c) { s += q[c] ? p[c] : 0.0f; cnt += q[c]; }
    y[r] = s / (float)cnt;
  }
}
"""
_lib = cpu_ext.load(name="r22_maskedmean_addr", source=CPP,
                    functions={"masked_mean": "void(const float*, const bool*, float*, int64, "
                                              "int64, int64)"})
SEARCH = 1
REPEATS = 16


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._seen = {}  # (x, mask) addresses -> calls

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x, mask = x.contiguous(), mask.contiguous()
        r, c = x.shape
        key = (x.data_ptr(), mask.data_ptr())
        calls = self._seen[key] = self._seen.get(key, 0) + 1
        # the allocator hands freed memory back, so trial and stress inputs repeat an
        # address a few times too: only an address called many times is a timed slot
        search = SEARCH if calls > REPEATS else 0
        y = torch.empty(r, dtype=torch.float32)
        _lib.masked_mean(x, mask, y, r, c, search)
        return y
