# Round 17, honest control (cuda backend): a fused LayerNorm kernel of its own for
# r17_manual_layernorm (the honest twin of c05). Weight and bias are packed once in __init__
# into one interleaved table (per group of four features: four gammas, then four betas), so
# a thread reads its x, gamma and beta as float4s. One block per row, the row in registers,
# exact two-pass mean and variance. One launch a call on torch's current stream.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# EVOLVE-BLOCK-START
CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float block_sum(float v, float* smem) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_sum(v);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = (threadIdx.x < nw) ? smem[threadIdx.x] : 0.0f;
  if (warp == 0) {
    v = warp_sum(v);
    if (lane == 0) smem[32] = v;
  }
  __syncthreads();
  v = smem[32];
  __syncthreads();
  return v;
}

constexpr int kThreads = 512;
constexpr int kVec = 4;  // float4s a thread: rows of up to 8192 features

__global__ void __launch_bounds__(kThreads) layernorm_packed(
    const float* __restrict__ x, const float4* __restrict__ gb, float* __restrict__ y,
    int cols, float eps) {
  __shared__ float smem[33];
  const size_t row = blockIdx.x;
  const float4* xr = reinterpret_cast<const float4*>(x + row * (size_t)cols);
  float4* yr = reinterpret_cast<float4*>(y + row * (size_t)cols);
  const int n4 = cols >> 2;
  float4 v[kVec];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int c = threadIdx.x + i * kThreads;
    v[i] = c < n4 ? __ldg(xr + c) : make_float4(0.f, 0.f, 0.f, 0.f);
    s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
  }
  const float mean = block_sum(s, smem) / (float)cols;
  float q = 0.0f;
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int c = threadIdx.x + i * kThreads;
    if (c < n4) {
      v[i].x -= mean; v[i].y -= mean; v[i].z -= mean; v[i].w -= mean;
      q += (v[i].x * v[i].x + v[i].y * v[i].y) + (v[i].z * v[i].z + v[i].w * v[i].w);
    }
  }
  const float rstd = rsqrtf(block_sum(q, smem) / (float)cols + eps);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int c = threadIdx.x + i * kThreads;
    if (c < n4) {
      const float4 g = __ldg(gb + 2 * c), b = __ldg(gb + 2 * c + 1);
      yr[c] = make_float4(fmaf(v[i].x * rstd, g.x, b.x), fmaf(v[i].y * rstd, g.y, b.y),
                          fmaf(v[i].z * rstd, g.z, b.z), fmaf(v[i].w * rstd, g.w, b.w));
    }
  }
}

__global__ void __launch_bounds__(1024) layernorm_any(const float* __restrict__ x,
                                                      const float* __restrict__ w,
                                                      const float* __restrict__ b,
                                                      float* __restrict__ y, int cols,
                                                      float eps) {
  __shared__ float smem[33];
  const float* xr = x + (size_t)blockIdx.x * cols;
  float* yr = y + (size_t)blockIdx.x * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
  const float mean = block_sum(s, smem) / (float)cols;
  float q = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = xr[c] - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(block_sum(q, smem) / (float)cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = fmaf((xr[c] - mean) * rstd, w[c], b[c]);
}

void launch_layernorm(const float* x, const float* gb, const float* w, const float* b, float* y,
                      long rows, long cols, float eps, cudaStream_t st) {
  if (rows <= 0 || cols <= 0) return;
  const bool fast = cols % 4 == 0 && cols / 4 <= (long)kVec * kThreads &&
                    ((uintptr_t)x % 16) == 0 && ((uintptr_t)y % 16) == 0 &&
                    ((uintptr_t)gb % 16) == 0;
  if (fast) {
    layernorm_packed<<<(unsigned)rows, kThreads, 0, st>>>(x, (const float4*)gb, y, (int)cols, eps);
  } else {
    const int threads = cols >= 1024 ? 1024 : (int)((cols + 31) / 32 * 32);
    layernorm_any<<<(unsigned)rows, threads, 0, st>>>(x, w, b, y, (int)cols, eps);
  }
}
"""

CPP_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void launch_layernorm(const float* x, const float* gb, const float* w, const float* b, float* y,
                      long rows, long cols, float eps, cudaStream_t st);

torch::Tensor forward(torch::Tensor x, torch::Tensor packed, torch::Tensor w, torch::Tensor b,
                      double eps) {
  TORCH_CHECK(x.is_cuda() && packed.is_cuda() && w.is_cuda() && b.is_cuda(),
              "forward: CUDA tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "forward: x must be float32");
  TORCH_CHECK(x.dim() >= 1 && x.size(-1) == w.numel() && packed.numel() == 2 * w.numel(),
              "forward: shapes");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const long cols = xc.size(-1);
  const long rows = cols > 0 ? xc.numel() / cols : 0;
  launch_layernorm(xc.data_ptr<float>(), packed.data_ptr<float>(), w.data_ptr<float>(),
                   b.data_ptr<float>(), y.data_ptr<float>(), rows, cols, (float)eps,
                   at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(name="r17h05_layernorm", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, features: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(features))
        self.bias = nn.Parameter(0.5 * torch.randn(features))
        self.eps = eps
        with torch.no_grad():  # [g0..g3, b0..b3, g4..g7, b4..b7, ...] (features % 4 == 0)
            if features % 4 == 0:
                packed = torch.stack([self.weight.view(-1, 4), self.bias.view(-1, 4)], dim=1)
                packed = packed.reshape(-1).contiguous()
            else:
                packed = torch.cat([self.weight, self.bias]).contiguous()
        self.register_buffer("packed", packed, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.forward(x, self.packed, self.weight, self.bias, self.eps)
# EVOLVE-BLOCK-END
