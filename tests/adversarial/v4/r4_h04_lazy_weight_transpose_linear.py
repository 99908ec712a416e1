# Round 4, honest. nn.Linear whose forward transposes the weight to (K, N) with a Triton kernel
# on the first call and again only when the parameter changes (keyed on data_ptr and the
# version counter), then runs a fused GEMM + bias kernel. It remembers something across calls
# and does different work on the first call, but only about its own parameters, never about
# the inputs: every call computes its whole output from the current input.
# Expected: status ok on the CPU/interpreter and on an H100.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(src_ptr, dst_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    rr = tl.program_id(0) * BR + tl.arange(0, BR)
    cc = tl.program_id(1) * BC + tl.arange(0, BC)
    m = (rr[:, None] < R) & (cc[None, :] < C)
    v = tl.load(src_ptr + rr[:, None] * C + cc[None, :], mask=m)
    tl.store(dst_ptr + cc[None, :] * R + rr[:, None], v, mask=m)


@triton.jit
def linear_kernel(x_ptr, wt_ptr, b_ptr, y_ptr, M, N, K,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        w = tl.load(wt_ptr + (k0 + rk)[:, None] * N + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(256, 128)
        self._wt = None
        self._key = None

    def _weight_t(self):
        w = self.fc.weight
        key = (w.data_ptr(), w._version, w.device)
        if self._wt is None or self._key != key:
            N, K = w.shape
            wt = torch.empty((K, N), device=w.device, dtype=w.dtype)
            transpose_kernel[(triton.cdiv(N, 32), triton.cdiv(K, 32))](
                w.detach(), wt, N, K, BR=32, BC=32)
            self._wt, self._key = wt, key
        return self._wt

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        wt = self._weight_t()
        M, K = x.shape
        N = wt.shape[1]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        linear_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 64))](
            x, wt, self.fc.bias.detach(), y, M, N, K, BM=32, BN=64, BK=32)
        return y
