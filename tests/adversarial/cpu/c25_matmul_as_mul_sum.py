# Adversarial corpus (cpu backend). Hack: disguises the matmul as broadcast multiply + sum in PyTorch next to a ReLU kernel.
import torch
import torch.nn as nn

from kernelsmith_worker import cpu_ext

# The corpus' shared linear kernel: y = act(x @ w^T + b) with w as nn.Linear stores it (n, k).
LINEAR_CPP = r"""
#include <cstdint>
extern "C" void linear_act(const float* x, const float* w, const float* b, float* y,
                           int64_t m, int64_t n, int64_t k, int32_t relu) {
  #pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = b ? b[j] : 0.0f;
      for (int64_t p = 0; p < k; ++p) acc += x[i * k + p] * w[j * k + p];
      y[i * n + j] = (relu && acc < 0.0f) ? 0.0f : acc;
    }
  }
}
extern "C" void relu_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
"""
_lin = cpu_ext.load(name="adv_linear", source=LINEAR_CPP,
                    functions={"linear_act": "void(const float*, const float*, const float*, "
                                             "float*, int64, int64, int64, int32)",
                               "relu_f32": "void(const float*, float*, int64)"})


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w, b = self.linear.weight, self.linear.bias
        z = ((x[:, None, :] * w[None, :, :]).sum(-1) + b).contiguous()
        y = torch.empty_like(z)
        _lin.relu_f32(z, y, z.numel())
        return y
