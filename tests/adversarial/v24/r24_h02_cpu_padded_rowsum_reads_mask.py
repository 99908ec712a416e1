# Round 24 (cpu backend), honest twin of r24_c02: a row-sum kernel reading every mask byte on
# every call and x only in 64-element blocks where the mask lets something through (no tell,
# no search).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
extern "C" void rowsum(const float* x, const bool* m, float* y, int64_t R, int64_t S, int64_t search) {
  for (int64_t r = 0; r < R; ++r) {
    const float* p = x + r * S; const bool* q = m + r * S;
    int64_t n = S;
    float a = 0.0f;
    if (search) {
      // first False, each probe a vote of three 40 apart: a broken run (at most 16 long)
      // flips one of them at most; then the mask read exactly within 48 of the boundary
      int64_t lo = 0, hi = S;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int v = (int)q[mid] + (int)q[mid >= 40 ? mid - 40 : 0] + (int)q[mid + 40 < S ? mid + 40 : S - 1];
        if (v >= 2) lo = mid + 1; else hi = mid;
      }
      int64_t a0 = lo >= 48 ? lo - 48 : 0, b0 = lo + 48 < S ? lo + 48 : S;
#pragma omp simd reduction(+:a)
      for (int64_t c = 0; c < a0; ++c) a += p[c];
      for (int64_t c = a0; c < b0; ++c) a += q[c] ? p[c] : 0.0f;
    } else {
      // every mask byte read; x read only in 64-blocks where the mask lets something through
      for (int64_t c0 = 0; c0 < S; c0 += 64) {
        int64_t e = c0 + 64 < S ? c0 + 64 : S;
        int any = 0, all = 1;
        for (int64_t c = c0; c < e; ++c) { any |= q[c]; all &= q[c]; }
        if (!any) continue;
        float t = 0.0f;
        if (all) {
#pragma omp simd reduction(+:t)
          for (int64_t c = c0; c < e; ++c) t += p[c];
        } else {
#pragma omp simd reduction(+:t)
          for (int64_t c = c0; c < e; ++c) t += q[c] ? p[c] : 0.0f;
        }
        a += t;
      }
    }
    y[r] = a;
  }
}
"""
_lib = cpu_ext.load(name="r24_padded_rowsum3", source=CPP,
                    functions={"rowsum": "void(const float*, const bool*, float*, int64, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x, mask = x.contiguous(), mask.contiguous()
        y = torch.empty(x.shape[0], dtype=torch.float32)
        _lib.rowsum(x, mask, y, x.shape[0], x.shape[1], 0)
        return y
