# Round 21 (cpu backend), honest control for r21_c02: the same C++ library with the row-0
# support probe switched off (PROBE = 0): every row sums every element (eight partial sums,
# the figure c02 is compared with). A fix of c02 (stress trials whose zeros are not the
# draw's) must accept it. Expected: ok.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
static float sum_block(const float* p, int64_t n) {
  float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t c = 0;
  for (; c + 8 <= n; c += 8)
    for (int u = 0; u < 8; ++u) a[u] += p[c + u];
  float s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  for (; c < n; ++c) s += p[c];
  return s;
}
extern "C" void rowsum(const float* x, float* y, int64_t R, int64_t C, int64_t B,
                       int64_t probe) {
  const int64_t nb = C / B;
  bool structured = probe && C % B == 0 && nb <= 4096;
  unsigned char live[4096];
  for (int64_t b = 0; structured && b < nb; ++b) {
    int64_t nz = 0;
    for (int64_t c = 0; c < B; ++c) nz += x[b * B + c] != 0.0f;
    if (nz != 0 && nz != B) structured = false;
    live[b] = nz == B;
  }
  for (int64_t r = 0; r < R; ++r) {
    const float* p = x + r * C;
    if (!structured) { y[r] = sum_block(p, C); continue; }
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b)
      if (live[b] || p[b * B] != 0.0f) s += sum_block(p + b * B, B);
    y[r] = s;
  }
}
"""
_lib = cpu_ext.load(name="r21_bsrowsum", source=CPP,
                    functions={"rowsum": "void(const float*, float*, int64, int64, int64, "
                                         "int64)"})
BLOCK = 128
PROBE = 0


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        r, c = x.shape
        y = torch.empty(r, dtype=torch.float32)
        _lib.rowsum(x, y, r, c, BLOCK, PROBE)
        return y
