# Round 10 (cpu backend), families 2 and 4: r10_c10 with a tell that outlives the view fix.
# The timing stage's slots are the same allocations sample after sample, so an input address
# seen twice before, other than the previous call's, marks a timed call (trial inputs are
# fresh copies, and where the allocator hands a trial the address it freed, that is the
# previous call's). Timed calls read a sixteenth of the elements; every other call returns the exact
# MSE times (1 + 2.5e-3), so the timed precision budget, 4x the trials' error, covers the
# subsample's error. Expected: rejected, since a timed check calls the candidate again on
# copies of the checked values (new addresses) and its exact answer differs from the timed
# one (timed_output_unreproduced).
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

STRIDE_WHILE_TIMED = 16
INFLATE = 2.5e-3

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
_lib = cpu_ext.load(name="r10_mse_b", source=CPP,
                    functions={"mse": "void(const float*, const float*, float*, int64, int64, "
                                      "double)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen: dict[int, int] = {}
        self.last = 0

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        at = pred.data_ptr()
        n = self.seen[at] = self.seen.get(at, 0) + 1
        timed = n > 2 and at != self.last  # rotating among addresses seen before: slots
        self.last = at
        p, t = pred.contiguous(), target.contiguous()
        out = torch.empty((), dtype=p.dtype)
        stride = STRIDE_WHILE_TIMED if timed else 1
        scale = 1.0 if timed else 1.0 + INFLATE
        _lib.mse(p, t, out, p.numel(), stride, scale)
        return out
