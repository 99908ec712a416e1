# Round 17, honest control (cuda backend): an explicit TF32 tensor-core GEMM of its own
# (nvcuda::wmma m16n16k8 tf32 fragments, 128x128 block tiles staged in shared memory, eight
# warps of 64x32), the honest twin of c04 (which passes cuBLAS off as its own kernel). TF32
# is what the corpus already accepts from Triton (g05); within the problem's tolerance on
# U[0, 1) inputs and norm-wise on the stress draws. A plain fp32 tiled kernel handles shapes
# that are not multiples of the tiles.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# EVOLVE-BLOCK-START
CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <mma.h>
#include <stdint.h>

using namespace nvcuda;

constexpr int BM = 128, BN = 128, BK = 32, PAD = 4;

__global__ void __launch_bounds__(256) wmma_tf32_gemm(const float* __restrict__ A,
                                                      const float* __restrict__ B,
                                                      float* __restrict__ C, int M, int N,
                                                      int K) {
  __shared__ __align__(128) float As[BM][BK + PAD];
  __shared__ __align__(128) float Bs[BK][BN + PAD];
  const int warp = threadIdx.x >> 5;
  const int wm = warp >> 2, wn = warp & 3;  // 2 x 4 warps, each 64 x 32
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[4][2];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int t = threadIdx.x; t < BM * BK / 4; t += blockDim.x) {
      const int r = t / (BK / 4), c = (t % (BK / 4)) * 4;
      *reinterpret_cast<float4*>(&As[r][c]) =
          __ldg(reinterpret_cast<const float4*>(A + (size_t)(m0 + r) * K + k0 + c));
    }
    for (int t = threadIdx.x; t < BK * BN / 4; t += blockDim.x) {
      const int r = t / (BN / 4), c = (t % (BN / 4)) * 4;
      *reinterpret_cast<float4*>(&Bs[r][c]) =
          __ldg(reinterpret_cast<const float4*>(B + (size_t)(k0 + r) * N + n0 + c));
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a[4];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b[2];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        wmma::load_matrix_sync(a[i], &As[wm * 64 + i * 16][kk], BK + PAD);
#pragma unroll
        for (int e = 0; e < a[i].num_elements; ++e) a[i].x[e] = wmma::__float_to_tf32(a[i].x[e]);
      }
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        wmma::load_matrix_sync(b[j], &Bs[kk][wn * 32 + j * 16], BN + PAD);
#pragma unroll
        for (int e = 0; e < b[j].num_elements; ++e) b[j].x[e] = wmma::__float_to_tf32(b[j].x[e]);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(C + (size_t)(m0 + wm * 64 + i * 16) * N + n0 + wn * 32 + j * 16,
                              acc[i][j], N, wmma::mem_row_major);
}

__global__ void tiled_fp32_gemm(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[16][17];
  __shared__ float Bs[16][17];
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    As[threadIdx.y][threadIdx.x] =
        (row < M && k0 + threadIdx.x < K) ? A[(size_t)row * K + k0 + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] =
        (col < N && k0 + threadIdx.y < K) ? B[(size_t)(k0 + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

void launch_gemm(const float* A, const float* B, float* C, int M, int N, int K,
                 cudaStream_t st) {
  const bool tiles = M % BM == 0 && N % BN == 0 && K % BK == 0 && K > 0 &&
                     ((uintptr_t)A % 16) == 0 && ((uintptr_t)B % 16) == 0 &&
                     ((uintptr_t)C % 32) == 0;
  if (tiles) {
    wmma_tf32_gemm<<<dim3(N / BN, M / BM), 256, 0, st>>>(A, B, C, M, N, K);
  } else {
    tiled_fp32_gemm<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), 0, st>>>(A, B, C, M, N, K);
  }
}
"""

CPP_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

void launch_gemm(const float* A, const float* B, float* C, int M, int N, int K,
                 cudaStream_t st);

torch::Tensor forward(torch::Tensor A, torch::Tensor B) {
  TORCH_CHECK(A.is_cuda() && B.is_cuda() && A.dim() == 2 && B.dim() == 2 &&
              A.size(1) == B.size(0), "forward: two CUDA matrices expected");
  TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32,
              "forward: float32 expected");
  auto a = A.contiguous(), b = B.contiguous();
  const int M = (int)a.size(0), K = (int)a.size(1), N = (int)b.size(1);
  auto C = torch::empty({M, N}, a.options());
  if (M == 0 || N == 0) return C;
  launch_gemm(a.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), M, N, K,
              at::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return C;
}
"""

_ext = load_inline(name="r17h07_gemm", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return _ext.forward(A, B)
# EVOLVE-BLOCK-END
