# Round 21 (cpu backend), honest control for r21_c05: the same C++ library with the binary
# search off (SEARCH = 0): every row reads its whole mask and sums x where it is set (a
# select, not a branch). A stress trial that perturbs boolean inputs (the proposed defence
# of c05) must accept it: it is exact for any mask. Expected: ok.
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
_lib = cpu_ext.load(name="r21_maskedmean", source=CPP,
                    functions={"masked_mean": "void(const float*, const bool*, float*, int64, "
                                              "int64, int64)"})
SEARCH = 0


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x, mask = x.contiguous(), mask.contiguous()
        r, c = x.shape
        y = torch.empty(r, dtype=torch.float32)
        _lib.masked_mean(x, mask, y, r, c, SEARCH)
        return y
