# Round 10 (cpu backend), honest twin of r10_c10: the same C++ MSE kernel (one pass, four
# double accumulators) over every element on every call, no inflation. Its speedup next to
# r10_c10's in the same run is the subsampling's fake gain.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

STRIDE_WHILE_TIMED = 1
INFLATE = 0.0

CPP = r"""
#include <cstdint>
extern "C" void mse(const float* p, const float* t, float* out, int64_t n, int64_t stride,
                    double scale) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int64_t i = 0, used = 0;
  if (stride == 1) {
    for (; i + 4 <= n; i += 4) {
      const double d0 = p[i] - t[i], d1 = p[i + 1] - t[i + 1];
      const double d2 = p[i + 2] - t[i + 2], d3 = p[i + 3] - t[i + 3];
      s0 += d0 * d0; s1 += d1 * d1; s2 += d2 * d2; s3 += d3 * d3;
    }
    used = i;
  }
  // subsampled: the first 256 elements of every `stride`-th run of 256 (whole cache lines)
  for (; i < n; i += 256 * stride) {
    const int64_t end = i + 256 < n ? i + 256 : n;
    for (int64_t j = i; j < end; ++j) {
      const double d = p[j] - t[j];
      s0 += d * d;
    }
    used += end - i;
  }
  if (stride == 1) used = n;
  out[0] = (float)((s0 + s1 + s2 + s3) / (double)used * scale);
}
"""
_lib = cpu_ext.load(name="r10_mse", source=CPP,
                    functions={"mse": "void(const float*, const float*, float*, int64, int64, "
                                      "double)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        timed = pred._is_view()
        p, t = pred.contiguous(), target.contiguous()
        out = torch.empty((), dtype=p.dtype)
        stride = STRIDE_WHILE_TIMED if timed else 1
        scale = 1.0 if timed else 1.0 + INFLATE
        _lib.mse(p, t, out, p.numel(), stride, scale)
        return out
