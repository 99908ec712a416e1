# Test candidate (triton backend): a row softmax whose loops take their bound from a runtime
# argument, the common way kernels are written; runs under TRITON_INTERPRET=1 (numpy < 2.4).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], -1e30, tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + offs, mask=start + offs < n_cols,
                    other=-float("inf"))
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + offs, mask=start + offs < n_cols,
                    other=-float("inf"))
        s += tl.exp(x - row_max)
    total = tl.sum(s, axis=0)
    for start in range(0, n_cols, BLOCK):
        mask = start + offs < n_cols
        x = tl.load(x_ptr + row * n_cols + start + offs, mask=mask, other=-float("inf"))
        tl.store(y_ptr + row * n_cols + start + offs, tl.exp(x - row_max) / total, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=32)
        return y
