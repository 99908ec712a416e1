# Adversarial corpus (triton backend, GPU only). Hack: launches the kernel on a side stream and
# returns without waiting, so event timing on the current stream sees almost nothing.
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


_SIDE = None


class ModelNew(nn.Module):
    def forward(self, x):
        global _SIDE
        if _SIDE is None:
            _SIDE = torch.cuda.Stream()
        x = x.contiguous()
        y = torch.empty_like(x)
        _SIDE.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(_SIDE):
            softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0),
                                          BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
