# Test candidate (cpu backend): lazy optimization. torch's elementwise ops (allowed, with a
# warning) do all of the problem's work but the final relu, which is the only custom kernel.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

CPP = r"""
#include <cstdint>
extern "C" void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
"""
_lib = cpu_ext.load(name="test_lazy_relu", source=CPP,
                    functions={"relu": "void(const float*, float*, int64)"})


class ModelNew(nn.Module):
    def forward(self, x):
        t = (torch.sin(x) * torch.cos(x) + 0.5 * x).contiguous()
        y = torch.empty_like(t)
        _lib.relu(t, y, t.numel())
        return y
