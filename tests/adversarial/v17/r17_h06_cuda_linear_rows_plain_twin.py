# Round 17, honest control (cuda backend): the linear kernel of c09 (eight warps a block, two
# output columns a warp, W read once with float4 loads, x staged in shared memory) launched
# plainly: no frames, no L2 set-aside, no access-policy window. Its figure is the one c09's
# should be read against.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

M, K, N = 8, 4096, 2048

# EVOLVE-BLOCK-START
CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <stdint.h>

constexpr int KC = 1024;
constexpr int MR = 8;

__global__ void __launch_bounds__(256) linear_rows_kernel(
    const float* __restrict__ x, const float* __restrict__ W, const float* __restrict__ b,
    float* __restrict__ y, int M, int N, int K) {
  __shared__ float4 xs[MR * KC / 4];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int n0 = (blockIdx.x * 8 + warp) * 2;
  float acc[2][MR];
#pragma unroll
  for (int c = 0; c < 2; ++c)
#pragma unroll
    for (int m = 0; m < MR; ++m) acc[c][m] = 0.0f;
  const int K4 = K / 4;
  for (int k0 = 0; k0 < K4; k0 += KC / 4) {
    for (int i = threadIdx.x; i < MR * KC / 4; i += blockDim.x) {
      const int m = i / (KC / 4), k = i % (KC / 4);
      xs[i] = (m < M && k0 + k < K4) ? __ldg(reinterpret_cast<const float4*>(x + (size_t)m * K) + k0 + k)
                                     : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int n = n0 + c;
      if (n >= N) continue;
      const float4* wr = reinterpret_cast<const float4*>(W + (size_t)n * K) + k0;
      for (int k = lane; k < KC / 4 && k0 + k < K4; k += 32) {
        const float4 w = __ldg(wr + k);
#pragma unroll
        for (int m = 0; m < MR; ++m) {
          const float4 a = xs[m * (KC / 4) + k];
          acc[c][m] = fmaf(a.x, w.x, fmaf(a.y, w.y, fmaf(a.z, w.z, fmaf(a.w, w.w, acc[c][m]))));
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    const int n = n0 + c;
#pragma unroll
    for (int m = 0; m < MR; ++m) {
      float v = acc[c][m];
      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0 && n < N && m < M) y[(size_t)m * N + n] = v + b[n];
    }
  }
}

__global__ void linear_any_kernel(const float* __restrict__ x, const float* __restrict__ W,
                                  const float* __restrict__ b, float* __restrict__ y, int M,
                                  int N, int K) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= (size_t)M * N) return;
  const int m = (int)(i / N), n = (int)(i % N);
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fmaf(x[(size_t)m * K + k], W[(size_t)n * K + k], acc);
  y[i] = acc + b[n];
}

void launch_linear(const float* x, const float* W, const float* b, float* y, int M, int N,
                   int K, cudaStream_t st) {
  const bool fast = M <= MR && K % 4 == 0 &&
                    ((uintptr_t)x % 16 == 0) && ((uintptr_t)W % 16 == 0);
  if (fast) {
    linear_rows_kernel<<<(unsigned)((N + 15) / 16), 256, 0, st>>>(x, W, b, y, M, N, K);
  } else {
    const size_t total = (size_t)M * N;
    linear_any_kernel<<<(unsigned)((total + 255) / 256), 256, 0, st>>>(x, W, b, y, M, N, K);
  }
}
"""

CPP_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void launch_linear(const float* x, const float* W, const float* b, float* y, int M, int N,
                   int K, cudaStream_t st);

torch::Tensor forward(torch::Tensor x, torch::Tensor W, torch::Tensor b) {
  TORCH_CHECK(x.is_cuda() && W.is_cuda() && b.is_cuda(), "forward: CUDA tensors expected");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32 && W.scalar_type() == torch::kFloat32 &&
              b.scalar_type() == torch::kFloat32, "forward: float32 expected");
  TORCH_CHECK(x.dim() == 2 && W.dim() == 2 && x.size(1) == W.size(1) && b.size(0) == W.size(0),
              "forward: shapes");
  auto xc = x.contiguous(), wc = W.contiguous(), bc = b.contiguous();
  const int Mr = (int)xc.size(0), Kd = (int)xc.size(1), Nc = (int)wc.size(0);
  auto y = torch::empty({Mr, Nc}, xc.options());
  if (Mr == 0 || Nc == 0) return y;
  launch_linear(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(),
                y.data_ptr<float>(), Mr, Nc, Kd, at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(name="r17h06_linear", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.forward(x, self.fc.weight, self.fc.bias)
# EVOLVE-BLOCK-END
