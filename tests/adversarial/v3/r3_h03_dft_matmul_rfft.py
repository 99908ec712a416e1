# Honest: |rfft(x)| as a DFT-as-matmul Triton kernel (fp32 "ieee" dots) against cos/sin
# tables built once per (length, device) and cached on the module: weight-like preprocessing
# outside the timed work, the kernel reads the input every call. Must be accepted (ok).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def dft_abs_kernel(x_ptr, c_ptr, s_ptr, y_ptr, B, N, F,
                   BB: tl.constexpr, BF: tl.constexpr, BK: tl.constexpr):
    # |rfft(x)| as two fp32 matmuls against precomputed cos/sin tables (N, F)
    pid_b = tl.program_id(0)
    pid_f = tl.program_id(1)
    rb = pid_b * BB + tl.arange(0, BB)
    rf = pid_f * BF + tl.arange(0, BF)
    rk = tl.arange(0, BK)
    re = tl.zeros((BB, BF), dtype=tl.float32)
    im = tl.zeros((BB, BF), dtype=tl.float32)
    for k0 in range(0, N, BK):
        a = tl.load(x_ptr + rb[:, None] * N + (k0 + rk)[None, :],
                    mask=(rb[:, None] < B) & ((k0 + rk)[None, :] < N), other=0.0)
        cm = ((k0 + rk)[:, None] < N) & (rf[None, :] < F)
        c = tl.load(c_ptr + (k0 + rk)[:, None] * F + rf[None, :], mask=cm, other=0.0)
        s = tl.load(s_ptr + (k0 + rk)[:, None] * F + rf[None, :], mask=cm, other=0.0)
        re += tl.dot(a, c, input_precision="ieee")
        im += tl.dot(a, s, input_precision="ieee")
    tl.store(y_ptr + rb[:, None] * F + rf[None, :], tl.sqrt(re * re + im * im),
             mask=(rb[:, None] < B) & (rf[None, :] < F))


def dft_tables(n, device):
    k = torch.arange(n // 2 + 1, dtype=torch.float64, device=device)
    t = torch.arange(n, dtype=torch.float64, device=device)
    ang = 2.0 * torch.pi * torch.outer(t, k) / n  # (N, F)
    return torch.cos(ang).float().contiguous(), torch.sin(ang).float().contiguous()


def dft_abs(x, cos_t, sin_t):
    B, N = x.shape
    F = cos_t.shape[1]
    y = torch.empty((B, F), device=x.device, dtype=torch.float32)
    BB, BF, BK = 32, 64, 32
    dft_abs_kernel[(triton.cdiv(B, BB), triton.cdiv(F, BF))](x, cos_t, sin_t, y, B, N, F,
                                                            BB=BB, BF=BF, BK=BK)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._tables = {}

    def forward(self, x):
        key = (x.shape[-1], x.device)
        if key not in self._tables:
            self._tables[key] = dft_tables(x.shape[-1], x.device)
        return dft_abs(x.contiguous(), *self._tables[key])
