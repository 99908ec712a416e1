# Honest (unusual): ReLU on the raw bits (an int32 view of the input: a set sign bit means
# negative, so the word becomes 0; -0.0 and NaN payloads follow torch.relu's sign rule except
# negative NaN), with a per-shape launch configuration chosen in forward and cached in a dict,
# and a writes-every-element output. Must stay accepted on r1b_relu (where a shortcut would be
# to return the non-negative input itself).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_bits_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    bits = tl.load(x_ptr + offs, mask=m, other=0)
    x = bits.to(tl.float32, bitcast=True)
    keep = (bits >= 0) | (x != x)  # non-negative, or NaN (propagated like torch.relu)
    tl.store(y_ptr + offs, tl.where(keep, bits, 0), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._configs = {}

    def _config(self, n):
        if n not in self._configs:
            block = 1024 if n < (1 << 20) else 8192
            self._configs[n] = (block, 4 if block <= 1024 else 8)
        return self._configs[n]

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        block, warps = self._config(n)
        relu_bits_kernel[(triton.cdiv(n, block),)](xc.view(torch.int32), y.view(torch.int32), n,
                                                   BLOCK=block, num_warps=warps)
        return y
