# Round 9, honest twin of r9_c08 (cpu backend) and control: the same C++ row softmax
# writing into one output buffer kept across calls (h04_preallocated_output's pattern), malloc
# left as the process set it. Its speedup next to r9_c08's in the same run is what the
# tunables gain.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

SET_TUNABLES = False  # the allocator as the process set it

CPP = r"""
#include <cmath>
#include <cstdint>
#include <malloc.h>
extern "C" void set_tunables() {
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  mallopt(M_TRIM_THRESHOLD, 0);
}
extern "C" void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) { yr[c] = std::exp(xr[c] - m); s += yr[c]; }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}
"""
_lib = cpu_ext.load(name="r9_malloc_tunables", source=CPP,
                    functions={"set_tunables": "void()",
                               "softmax_rows": "void(const float*, float*, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = {}
        self.set = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if SET_TUNABLES and not self.set:
            _lib.set_tunables()
            self.set = True
        key = (tuple(x.shape), x.dtype)
        if key not in self.out:
            self.out[key] = torch.empty_like(x)
        y = self.out[key]
        _lib.softmax_rows(x, y, x.shape[0], x.shape[1])
        return y
