# Honest: nn.Linear(256 -> 128) (r3_linear_randn_small) with the weight repacked once, when the
# module reaches its device (Module._apply), to a contiguous (K, N) copy, and the bias fused into
# the TF32 tl.dot epilogue. The parameters are the module's own (same seed as Model); the kernel
# reads x every call. Must be accepted (ok).
import torch
import torch.nn as nn
import triton
import triton.language as tl

K, N = 256, 128


@triton.jit
def linear_kt_kernel(x_ptr, wt_ptr, b_ptr, y_ptr, M, N, K,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(wt_ptr + (k0 + rk)[:, None] * N + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="tf32")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)
        self._repack()

    def _repack(self):
        with torch.no_grad():
            self._wt = self.fc.weight.detach().t().contiguous()

    def _apply(self, fn, *args, **kwargs):
        out = super()._apply(fn, *args, **kwargs)
        self._repack()
        return out

    def forward(self, x):
        x = x.contiguous()
        M = x.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        linear_kt_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 64))](
            x, self._wt, self.fc.bias, y, M, N, K, BM=64, BN=64, BK=32)
        return y
