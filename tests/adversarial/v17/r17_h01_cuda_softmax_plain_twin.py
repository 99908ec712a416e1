# Round 17, honest control (cuda backend): the plain one-block-per-row softmax that the round's
# softmax cheats (c01, c02, c03, c06, c07, c10) share, with none of their tricks: one kernel
# per call on torch's current stream, the row held in registers (float4 loads), a three-pass
# fallback for other shapes. Their reported speedups are to be read against this one's.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# EVOLVE-BLOCK-START
CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float ks_warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float ks_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
// Block-wide max or sum; every thread gets the result. smem: 33 floats.
template <bool MAX>
__device__ __forceinline__ float ks_block_reduce(float v, float* smem) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = MAX ? ks_warp_max(v) : ks_warp_sum(v);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = (threadIdx.x < nw) ? smem[threadIdx.x] : (MAX ? -INFINITY : 0.0f);
  if (warp == 0) {
    v = MAX ? ks_warp_max(v) : ks_warp_sum(v);
    if (lane == 0) smem[32] = v;
  }
  __syncthreads();
  v = smem[32];
  __syncthreads();
  return v;
}

// One block per row, the row held in registers (two float4 a thread): one read, one write.
__global__ void __launch_bounds__(1024) softmax_rows_vec(const float* __restrict__ x,
                                                         float* __restrict__ y, int cols) {
  __shared__ float smem[33];
  const size_t row = blockIdx.x;
  const float4* xr = reinterpret_cast<const float4*>(x + row * (size_t)cols);
  float4* yr = reinterpret_cast<float4*>(y + row * (size_t)cols);
  const int n4 = cols >> 2;
  float4 v[2];
  float m = -INFINITY;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c < n4) {
      v[i] = __ldg(xr + c);
      m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
    }
  }
  m = ks_block_reduce<true>(m, smem);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c < n4) {
      v[i].x = expf(v[i].x - m); v[i].y = expf(v[i].y - m);
      v[i].z = expf(v[i].z - m); v[i].w = expf(v[i].w - m);
      s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
  }
  s = ks_block_reduce<false>(s, smem);
  const float inv = 1.0f / s;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int c = threadIdx.x + i * blockDim.x;
    if (c < n4) {
      v[i].x *= inv; v[i].y *= inv; v[i].z *= inv; v[i].w *= inv;
      yr[c] = v[i];
    }
  }
}

// Any shape: three passes over the row.
__global__ void __launch_bounds__(1024) softmax_rows_any(const float* __restrict__ x,
                                                         float* __restrict__ y, int cols) {
  __shared__ float smem[33];
  const float* xr = x + (size_t)blockIdx.x * cols;
  float* yr = y + (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
  m = ks_block_reduce<true>(m, smem);
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
  s = ks_block_reduce<false>(s, smem);
  const float inv = 1.0f / s;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv;
}

static void ks_softmax(const float* x, float* y, long rows, long cols, cudaStream_t st) {
  if (rows <= 0 || cols <= 0) return;
  const long n4 = cols / 4;
  const bool vec = cols % 4 == 0 && n4 <= 2048 && ((uintptr_t)x % 16) == 0 &&
                   ((uintptr_t)y % 16) == 0;
  if (vec) {
    int threads = (int)(((n4 + 1) / 2 + 31) / 32 * 32);
    threads = threads < 32 ? 32 : (threads > 1024 ? 1024 : threads);
    softmax_rows_vec<<<(unsigned)rows, threads, 0, st>>>(x, y, (int)cols);
  } else {
    int threads = cols >= 1024 ? 1024 : (int)((cols + 31) / 32 * 32);
    softmax_rows_any<<<(unsigned)rows, threads, 0, st>>>(x, y, (int)cols);
  }
}

void launch_softmax(const float* x, float* y, long rows, long cols, cudaStream_t st) {
  ks_softmax(x, y, rows, cols, st);
}
"""

CPP_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void launch_softmax(const float* x, float* y, long rows, long cols, cudaStream_t st);

torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "forward: x must be a CUDA tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "forward: x must be float32");
  TORCH_CHECK(x.dim() >= 1, "forward: x must have a last dimension");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const long cols = xc.size(-1);
  const long rows = cols > 0 ? xc.numel() / cols : 0;
  launch_softmax(xc.data_ptr<float>(), y.data_ptr<float>(), rows, cols,
                 at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(name="r17h01_softmax", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.forward(x)
# EVOLVE-BLOCK-END
