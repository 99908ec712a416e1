"""r18_h02 (honest) -- triton backend.

Honest twin of r18_c01: an own one-pass-per-row LayerNorm (two-pass mean/variance over the
row held in registers), weight and bias packed once in __init__ (and again if the parameters
change) into one interleaved (2, features) buffer, output written into a padded per-shape
workspace (rows x (features + 64)) reused across calls and returned as a strided view.
No torch compute in forward. Control for defences against r18_c01 (name claims, record
function switches): it must keep its acceptance.
Expected: ok on the CPU (interpreter, r18_manual_layernorm_small) and the GPU.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layernorm(x_ptr, wb_ptr, y_ptr, N, y_stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    m = o < N
    x = tl.load(x_ptr + row.to(tl.int64) * N + o, mask=m, other=0.0)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(m, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(wb_ptr + o, mask=m, other=0.0)
    b = tl.load(wb_ptr + N + o, mask=m, other=0.0)
    tl.store(y_ptr + row.to(tl.int64) * y_stride + o, xc * rstd * w + b, mask=m)


class ModelNew(nn.Module):
    def __init__(self, features: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(features))
        self.bias = nn.Parameter(0.5 * torch.randn(features))
        self.eps = eps
        self._packed = None
        self._key = None
        self._work = None

    def _pack(self):
        key = (self.weight.data_ptr(), self.weight._version, self.bias.data_ptr(),
               self.bias._version)
        if self._packed is None or self._key != key:
            self._packed = torch.stack([self.weight.detach(), self.bias.detach()]).contiguous()
            self._key = key
        return self._packed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N = x.shape[-1]
        rows = x.numel() // N
        wb = self._pack()
        if self._work is None or self._work.shape[0] != rows or self._work.device != x.device:
            self._work = torch.empty(rows, N + 64, device=x.device, dtype=torch.float32)
        _layernorm[(rows,)](x, wb, self._work, N, self._work.stride(0), self.eps,
                            BLOCK=triton.next_power_of_2(N))
        return self._work[:, :N].view(*x.shape)
