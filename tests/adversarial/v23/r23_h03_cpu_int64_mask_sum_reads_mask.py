# Round 23 (cpu backend), honest twin of r23_c03: the same kernel reading every element of x
# and of the int64 mask (sum of x * mask in float64, SEARCH = 0). Expected: ok.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
extern "C" void masked_sum(const float* x, const int64_t* m, float* out, int64_t N,
                           int64_t search) {
  double a[4] = {0.0, 0.0, 0.0, 0.0};
  if (search) {
    int64_t lo = 0, hi = N;  // first index whose mask is not 0 (left padding)
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (m[mid] != 0) hi = mid; else lo = mid + 1;
    }
    int64_t i = lo;
    for (; i + 4 <= N; i += 4)
      for (int u = 0; u < 4; ++u) a[u] += (double)x[i + u];
    for (; i < N; ++i) a[0] += (double)x[i];
  } else {
    int64_t i = 0;
    for (; i + 4 <= N; i += 4)
      for (int u = 0; u < 4; ++u) a[u] += (double)x[i + u] * (double)m[i + u];
    for (; i < N; ++i) a[0] += (double)x[i] * (double)m[i];
  }
  out[0] = (float)((a[0] + a[1]) + (a[2] + a[3]));
}
"""
_lib = cpu_ext.load(name="r23_leftpad_sum_h", source=CPP,
                    functions={"masked_sum": "void(const float*, const int64*, float*, int64, "
                                             "int64)"})
SEARCH = 0


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x, mask = x.contiguous(), mask.contiguous()
        out = torch.empty((), dtype=torch.float32)
        _lib.masked_sum(x, mask, out, x.numel(), SEARCH)
        return out
