# Honest `cuda` candidate for examples/softmax/problem.py: one thread block per row, three
# passes (max, sum of exp, normalise) with warp-shuffle block reductions. Compiled by
# torch.utils.cpp_extension.load_inline; the worker caches the build by source hash.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# EVOLVE-BLOCK-START
CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cmath>

constexpr int kThreads = 1024;

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

// Reduces v over the block; every thread gets the result. smem holds blockDim.x / 32 floats.
template <bool kMax>
__device__ float block_reduce(float v, float* smem) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = kMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = threadIdx.x < warps ? smem[threadIdx.x] : (kMax ? -INFINITY : 0.0f);
  if (warp == 0) v = kMax ? warp_max(v) : warp_sum(v);
  if (threadIdx.x == 0) smem[0] = v;
  __syncthreads();
  v = smem[0];
  __syncthreads();  // smem is reused by the next reduction
  return v;
}

__global__ void softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y,
                                    int cols) {
  __shared__ float smem[kThreads / 32];
  const float* xr = x + static_cast<size_t>(blockIdx.x) * cols;
  float* yr = y + static_cast<size_t>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
  m = block_reduce<true>(m, smem);
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
  s = block_reduce<false>(s, smem);
  const float inv = 1.0f / s;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv;
}

torch::Tensor softmax_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "softmax_forward: x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softmax_forward: x must be float32");
  TORCH_CHECK(x.dim() == 2, "softmax_forward: x must be 2-D");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int rows = static_cast<int>(xc.size(0));
  const int cols = static_cast<int>(xc.size(1));
  if (rows == 0 || cols == 0) return y;
  softmax_rows_kernel<<<rows, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), cols);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

CPP_SOURCE = "torch::Tensor softmax_forward(torch::Tensor x);"

_ext = load_inline(
    name="ks_softmax_rows",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["softmax_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """Softmax over the last dimension of a 2-D fp32 CUDA tensor, in a CUDA C++ kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_forward(x)
# EVOLVE-BLOCK-END
