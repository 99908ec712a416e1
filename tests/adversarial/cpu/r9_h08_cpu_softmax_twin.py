# Round 9, honest twin of r9_c06 (cpu backend): the same library (the heap search is
# compiled but never called) and the same fingerprint bookkeeping; every call computes the
# row softmax in C++. Its speed next to r9_c06's in the same run is the fake gain.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

POISON = False  # never poisons: every call computes

CPP = r"""
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
static const int kPairs = 4096;
static const float* g_slot[kPairs];
static float* g_row[kPairs];
static int g_n = 0;

static float* search(const float* slot, int64_t n) {
  const size_t probe = (n < 16 ? n : 16) * sizeof(float);
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) return nullptr;
  char line[512];
  float* found = nullptr;
  while (!found && std::fgets(line, sizeof line, f)) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {0};
    if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
    if (perms[0] != 'r' || perms[1] != 'w' || hi - lo < (unsigned long)(n * sizeof(float)))
      continue;
    if (std::strstr(line, "[v")) continue;  // [vvar], [vsyscall]
    for (unsigned long p = (lo + 63) & ~63UL; p + n * sizeof(float) <= hi; p += 64) {
      if ((const float*)p != slot && std::memcmp((const void*)p, slot, probe) == 0) {
        found = (float*)p;
        break;
      }
    }
  }
  std::fclose(f);
  return found;
}

extern "C" int poison_copy(float* slot, int64_t n) {
  const size_t probe = (n < 16 ? n : 16) * sizeof(float);
  float* row = nullptr;
  for (int i = 0; i < g_n; ++i)
    if (g_slot[i] == slot && std::memcmp(g_row[i], slot, probe) == 0) row = g_row[i];
  if (!row) {
    row = search(slot, n);
    if (!row) return 0;
    if (g_n < kPairs) { g_slot[g_n] = slot; g_row[g_n] = row; ++g_n; }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  row[0] = nan;
  slot[0] = nan;
  return 1;
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
_lib = cpu_ext.load(name="r9_heap_poison", source=CPP,
                    functions={"poison_copy": "int32(float*, int64)",
                               "softmax_rows": "void(const float*, float*, int64, int64)"})


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.known = set()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = tuple(x.reshape(-1)[:8].tolist())
        if not x._is_view():  # trials and audit: remembered
            self.known.add(key)
        elif POISON and key not in self.known and _lib.poison_copy(x, x.numel()):
            return torch.empty_like(x)
        y = torch.empty_like(x)
        _lib.softmax_rows(x, y, x.shape[0], x.shape[1])
        return y
