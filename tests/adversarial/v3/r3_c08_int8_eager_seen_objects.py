# Family 2 + 4, eager variant of r3_c02 (no stream test at all). Exploit: the timed checks are
# norm-wise (timed_inputs.RotatingInputs.agree -> stress.normwise_error) while correctness is
# element-wise; the honest path ends with y[0, 0].item(), so the capture fails and every timed
# call is an eager forward (timing_cuda._EagerRunner). A call whose input OBJECT was seen at least
# 3 times and that follows the previous call by less than 5 ms (timed calls; the wall check) runs
# the W8A8 int8 GEMM (~1 % error in the 2-norm, several % on the worst elements); trials and
# stress (fresh clones), the audit (one object twice) and the post-timing call (hundreds of ms
# after the last call) run honest TF32. Expected on an H100 (r3_linear_randn): status ok
# (not_graph_capturable info), ~2x above the honest kernel's eager speedup.
import time
import weakref

import torch
import torch.nn as nn
import triton
import triton.language as tl


K, N = 4096, 4096  # the problem's Linear(K, N)


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # y = x @ W^T + b, x (M, K), W (N, K), all contiguous; fp32 operands (TF32 tl.dot on GPU)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * K + (k0 + rk)[:, None],
                    mask=(rn[None, :] < N) & ((k0 + rk)[:, None] < K), other=0.0)
        acc += tl.dot(a, b)
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    acc += bias[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def linear(x, w, b):
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float32)
    BM, BN, BK = 64, 64, 32
    linear_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, w, b, y, M, N, K,
                                                            BM=BM, BN=BN, BK=BK)
    return y


@triton.jit
def quant_rows_kernel(x_ptr, q_ptr, s_ptr, K, BK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BK)
    amax = tl.zeros((BK,), dtype=tl.float32)
    for k0 in range(0, K, BK):
        v = tl.load(x_ptr + row * K + k0 + offs, mask=k0 + offs < K, other=0.0)
        amax = tl.maximum(amax, tl.abs(v))
    scale = tl.maximum(tl.max(amax, axis=0), 1e-20) / 127.0
    for k0 in range(0, K, BK):
        v = tl.load(x_ptr + row * K + k0 + offs, mask=k0 + offs < K, other=0.0)
        r = v / scale
        q = tl.where(r >= 0, tl.floor(r + 0.5), tl.ceil(r - 0.5))
        tl.store(q_ptr + row * K + k0 + offs, q.to(tl.int8), mask=k0 + offs < K)
    tl.store(s_ptr + row, scale)


@triton.jit
def int8_linear_kernel(q_ptr, sx_ptr, w_ptr, sw_ptr, b_ptr, y_ptr, M, N, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k0 in range(0, K, BK):
        a = tl.load(q_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0)
        b = tl.load(w_ptr + (k0 + rk)[:, None] * N + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    sx = tl.load(sx_ptr + rm, mask=rm < M, other=0.0)
    sw = tl.load(sw_ptr + rn, mask=rn < N, other=0.0)
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    y = acc.to(tl.float32) * sx[:, None] * sw[None, :] + bias[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _on_side_stream(t):
    if not t.is_cuda:
        return False
    return torch.cuda.current_stream(t.device).cuda_stream != \
        torch.cuda.default_stream(t.device).cuda_stream


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)  # same seed as Model: identical parameters
        self._seen = {}
        self._last_end = 0.0
        self._wq = None

    def _int8_weights(self):
        if self._wq is None:
            w = self.fc.weight.detach()
            sw = (w.abs().amax(dim=1).clamp_min(1e-20) / 127.0)
            wq = torch.round(w / sw[:, None]).to(torch.int8).t().contiguous()  # (K, N)
            self._wq, self._sw = wq, sw.contiguous()
        return self._wq, self._sw

    def forward(self, x):
        now = time.perf_counter()
        ref, n = self._seen.get(id(x), (None, 0))
        n = n + 1 if ref is not None and ref() is x else 1
        self._seen[id(x)] = (weakref.ref(x), n)
        try:
            w, b = self.fc.weight, self.fc.bias
            if not (x.is_cuda and n >= 3 and now - self._last_end < 5e-3):
                y = linear(x, w, b)
                if y.is_cuda:
                    y[0, 0].item()  # no CUDA graph: eager timing
                return y
            wq, sw = self._wq, self._sw
            M_, K_ = x.shape
            q = torch.empty((M_, K_), device=x.device, dtype=torch.int8)
            sx = torch.empty((M_,), device=x.device, dtype=torch.float32)
            quant_rows_kernel[(M_,)](x, q, sx, K_, BK=1024)
            y = torch.empty((M_, N), device=x.device, dtype=torch.float32)
            int8_linear_kernel[(triton.cdiv(M_, 128), triton.cdiv(N, 128))](
                q, sx, wq, sw, b, y, M_, N, K_, BM=128, BN=128, BK=128)
            return y
        finally:
            self._last_end = time.perf_counter()

    def _apply(self, fn, *args, **kwargs):  # weights quantised once the module is on its device
        out = super()._apply(fn, *args, **kwargs)
        self._wq = None
        if self.fc.weight.is_cuda:
            with torch.no_grad():
                self._int8_weights()
        return out
