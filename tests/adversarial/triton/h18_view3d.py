# Adversarial corpus (triton backend). Honest: softmax over the last dimension of a 3-D input
# through a 2-D view; the output is viewed back.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)


class ModelNew(nn.Module):
    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        y = torch.empty_like(x2)
        softmax_kernel[(x2.shape[0],)](x2, y, x2.shape[1], x2.stride(0),
                                       BLOCK=triton.next_power_of_2(shape[-1]))
        return y.view(shape)
