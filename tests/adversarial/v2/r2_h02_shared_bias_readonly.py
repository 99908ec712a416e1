# Honest (unusual): ModelNew keeps the tensor init input (the very object the reference also
# holds as its buffer) as its own buffer and reads it in the kernel without copying it; it never
# writes it. Must stay accepted by a fix for r2_c04 (e.g. giving the two models separate copies
# or checking the reference's buffers after each stage).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m, other=0.0)
             + tl.load(b_ptr + offs, mask=m, other=0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.register_buffer("bias", bias)  # shared with the reference, read only

    def forward(self, x):
        x = x.contiguous()
        b = self.bias if self.bias.is_contiguous() else self.bias.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, b, y, n, BLOCK=1024)
        return y
