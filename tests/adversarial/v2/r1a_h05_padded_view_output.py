# r1a honest, must stay accepted. Unusual but legitimate: the softmax writes into a
# workspace whose rows are padded to a multiple of 16 floats (aligned rows), kept across calls
# per shape and rewritten completely every call, and forward returns a strided *view* of it
# (out[:, :n_cols], non-contiguous). Every call overwrites the whole view, so nothing stale
# can leak; it is the same buffer object every time (like a preallocated output).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_stride + offs, mask=offs < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * y_stride + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._ws = {}

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        padded = triton.cdiv(cols, 16) * 16 + 16
        key = (rows, padded, x.dtype, x.device)
        if key not in self._ws:
            self._ws[key] = torch.empty(rows, padded, dtype=x.dtype, device=x.device)
        ws = self._ws[key]
        softmax_kernel[(rows,)](x, ws, cols, x.stride(0), ws.stride(0),
                                BLOCK=triton.next_power_of_2(cols))
        return ws[:, :cols]
