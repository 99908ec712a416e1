# Round 17, honest control (cuda backend): the fused y = x * W + b of r17_scale_shift_param
# in one float4 grid-stride kernel on torch's current stream (the honest twin of c08: no
# frames, no reference model touched). Its speedup comes from one pass instead of two.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

N = 4096

# EVOLVE-BLOCK-START
CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void scale_shift_vec(const float4* __restrict__ x, const float4* __restrict__ w,
                                const float4* __restrict__ b, float4* __restrict__ y,
                                size_t n4, int cols4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
       i += (size_t)gridDim.x * blockDim.x) {
    const float4 a = __ldg(x + i), s = __ldg(w + i), c = __ldg(b + (i % cols4));
    y[i] = make_float4(fmaf(a.x, s.x, c.x), fmaf(a.y, s.y, c.y), fmaf(a.z, s.z, c.z),
                       fmaf(a.w, s.w, c.w));
  }
}

__global__ void scale_shift_any(const float* __restrict__ x, const float* __restrict__ w,
                                const float* __restrict__ b, float* __restrict__ y, size_t n,
                                long cols) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    y[i] = fmaf(x[i], w[i], b[i % cols]);
}

void launch_scale_shift(const float* x, const float* w, const float* b, float* y, size_t n,
                        long cols, cudaStream_t st) {
  if (n == 0) return;
  const bool vec = cols % 4 == 0 && ((uintptr_t)x | (uintptr_t)w | (uintptr_t)b |
                                     (uintptr_t)y) % 16 == 0;
  if (vec) {
    const size_t n4 = n / 4;
    size_t blocks = (n4 + 255) / 256;
    if (blocks > 132 * 16) blocks = 132 * 16;
    scale_shift_vec<<<(unsigned)blocks, 256, 0, st>>>(
        (const float4*)x, (const float4*)w, (const float4*)b, (float4*)y, n4, (int)(cols / 4));
  } else {
    size_t blocks = (n + 255) / 256;
    if (blocks > 132 * 16) blocks = 132 * 16;
    scale_shift_any<<<(unsigned)blocks, 256, 0, st>>>(x, w, b, y, n, cols);
  }
}
"""

CPP_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void launch_scale_shift(const float* x, const float* w, const float* b, float* y, size_t n,
                        long cols, cudaStream_t st);

torch::Tensor forward(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  TORCH_CHECK(x.is_cuda() && w.is_cuda() && b.is_cuda(), "forward: CUDA tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && w.scalar_type() == torch::kFloat32 &&
              b.scalar_type() == torch::kFloat32, "forward: float32 expected");
  TORCH_CHECK(x.sizes() == w.sizes() && b.dim() == 1 && x.size(-1) == b.size(0),
              "forward: shapes");
  auto xc = x.contiguous(), wc = w.contiguous(), bc = b.contiguous();
  auto y = torch::empty_like(xc);
  launch_scale_shift(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(),
                     y.data_ptr<float>(), (size_t)xc.numel(), (long)xc.size(-1),
                     at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(name="r17h04_scale_shift", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(N, N))
        self.bias = nn.Parameter(torch.randn(N))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.forward(x, self.weight, self.bias)
# EVOLVE-BLOCK-END
