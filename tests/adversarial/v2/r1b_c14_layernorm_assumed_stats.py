# Family 4 (input distribution and tolerance). Exploit: LayerNorm with the distribution's
# statistics instead of the input's. For N(0, 1) inputs the mean and variance over 1M elements
# per sample are 0 and 1 within ~1e-3, so y = x * weight + bias differs from the true
# normalisation by ~1e-3 * (1 + |y|), far inside atol + rtol*|y| = 0.01 + 0.01*|y|. The two
# reduction passes disappear: one elementwise kernel. Why it passes today: values pass, the
# output follows the input, weight and bias are used, only a Triton kernel runs. Wrong for any
# input with a different scale or offset. Stress trials (stress.py, in progress): the `signed`
# redraw is N(0, 1) again, so the shortcut still holds there; the `wide` redraw (log-normal
# magnitudes) is recognised on the device (any of 1024 sampled |x| > 6) and normalised for
# real with a two-pass kernel (one program per sample).
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gauss_probe_kernel(x_ptr, step, flag_ptr, S: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, S).to(tl.int64) * step)
    tl.store(flag_ptr, (tl.max(tl.abs(v), axis=0) <= 6.0).to(tl.int32))


@triton.jit
def real_layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, D, flag_ptr, BLOCK: tl.constexpr):
    if tl.load(flag_ptr) == 0:
        base = tl.program_id(0).to(tl.int64) * D
        s1 = tl.zeros((BLOCK,), tl.float32)
        for d0 in range(0, D, BLOCK):
            o = d0 + tl.arange(0, BLOCK)
            s1 += tl.load(x_ptr + base + o, mask=o < D, other=0.0)
        mean = tl.sum(s1, axis=0) / D
        s2 = tl.zeros((BLOCK,), tl.float32)
        for d0 in range(0, D, BLOCK):
            o = d0 + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + base + o, mask=o < D, other=0.0)
            s2 += tl.where(o < D, (x - mean) * (x - mean), 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(s2, axis=0) / D + 1e-5)
        for d0 in range(0, D, BLOCK):
            o = d0 + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + base + o, mask=o < D, other=0.0)
            w = tl.load(w_ptr + o, mask=o < D, other=1.0)
            b = tl.load(b_ptr + o, mask=o < D, other=0.0)
            tl.store(y_ptr + base + o, (x - mean) * rstd * w + b, mask=o < D)


@triton.jit
def affine_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, D, flag_ptr, BLOCK: tl.constexpr):
    if tl.load(flag_ptr) != 0:
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        d = offs % D
        x = tl.load(x_ptr + offs, mask=m, other=0.0)
        w = tl.load(w_ptr + d, mask=m, other=1.0)
        b = tl.load(b_ptr + d, mask=m, other=0.0)
        tl.store(y_ptr + offs, x * w + b, mask=m)


# Triton's interpreter (the CPU part of the corpus) pays per program and block step: wider
# blocks there keep the entry within its stage limits; the GPU keeps register-sized blocks.
_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
BLOCK = 65536 if _INTERPRETED else 4096

class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n, D = x.numel(), self.ln.weight.numel()
        flag = torch.empty(1, dtype=torch.int32, device=x.device)
        gauss_probe_kernel[(1,)](x, max(1, n // 1024), flag, S=1024)
        affine_kernel[(triton.cdiv(n, BLOCK),)](x, self.ln.weight, self.ln.bias, y, n, D, flag,
                                                BLOCK=BLOCK)
        real_layernorm_kernel[(n // D,)](x, self.ln.weight, self.ln.bias, y, D, flag, BLOCK=BLOCK)
        return y
