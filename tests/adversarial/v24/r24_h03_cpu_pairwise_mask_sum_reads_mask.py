# Round 24 (cpu backend), honest twin of r24_c03: the same kernel reading every mask entry of
# every query row (a vectorised select-and-sum over the keys).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
extern "C" void pairsum(const float* v, const bool* m, float* y, int64_t B, int64_t S,
                        int64_t search) {
  double pre[8193];
  for (int64_t b = 0; b < B; ++b) {
    const float* vb = v + b * S;
    pre[0] = 0.0;
    for (int64_t j = 0; j < S; ++j) pre[j + 1] = pre[j] + (double)vb[j];
    for (int64_t i = 0; i < S; ++i) {
      const bool* q = m + (b * S + i) * S;
      float a = 0.0f;
      if (search) {
        // first False, each probe a vote of three 40 apart; the mask read exactly near it
        int64_t lo = 0, hi = S;
        while (lo < hi) {
          int64_t mid = lo + (hi - lo) / 2;
          int c = (int)q[mid] + (int)q[mid >= 40 ? mid - 40 : 0] + (int)q[mid + 40 < S ? mid + 40 : S - 1];
          if (c >= 2) lo = mid + 1; else hi = mid;
        }
        int64_t a0 = lo >= 48 ? lo - 48 : 0, b0 = lo + 48 < S ? lo + 48 : S;
        double t = pre[a0];
        for (int64_t j = a0; j < b0; ++j) t += q[j] ? (double)vb[j] : 0.0;
        a = (float)t;
      } else {
#pragma omp simd reduction(+:a)
        for (int64_t j = 0; j < S; ++j) a += q[j] ? vb[j] : 0.0f;
      }
      y[b * S + i] = a;
    }
  }
}
"""
_lib = cpu_ext.load(name="r24_pairwise_mask_sum", source=CPP,
                    functions={"pairsum": "void(const float*, const bool*, float*, int64, int64, "
                                          "int64)"})
SEARCH = 0


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        v, mask = v.contiguous(), mask.contiguous()
        b, s = v.shape
        y = torch.empty(b, s, dtype=torch.float32)
        _lib.pairsum(v, mask, y, b, s, SEARCH)
        return y
