# Round 21 (cpu backend), cheat: no stress trial, timed refresh or post-timing draw ever
# changes a boolean input, so a kernel may assume the structure get_inputs() gives its
# masks and read a logarithmic share of them.
#
# Problem r8_masked_row_mean_small: mean of x over each row's mask, the mask a prefix
# (arange(T) < length) of random length. The kernel finds each row's length by binary
# search on the mask (11 reads of 2048) and sums x over that prefix only: it never reads
# the mask elsewhere. Exact for every prefix mask, wrong for any other (a mask with a hole,
# or a suffix mask). Every mask the evaluator shows is a prefix: the trials' (get_inputs),
# the stress trials' (stress._redraw: a non-float tensor is cloned as it is), the timed
# slots' (fresh draws: "fixed" kind, booleans are a draw's values) and the post-timing
# spikes draw (only floats are rescaled). No tell, no memo, no frame access. The round-8
# cheat (r8_c02) remembered trial 0's lengths and died on fresh draws; this one needs no
# memory. Expected from a correct evaluator: incorrect (a stress trial that changes boolean
# and integer inputs: flip a random share of a mask, holes included, where the reference
# stays finite).
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
SEARCH = 1


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x, mask = x.contiguous(), mask.contiguous()
        r, c = x.shape
        y = torch.empty(r, dtype=torch.float32)
        _lib.masked_mean(x, mask, y, r, c, SEARCH)
        return y
