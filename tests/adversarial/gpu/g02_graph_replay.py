# Adversarial corpus (triton backend, GPU only). Hack: captures the kernel in a CUDA graph on
# the first input and afterwards only replays that graph (compute once, then replay): new
# inputs are never read.
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


def _launch(x, y):
    softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0),
                                  BLOCK=triton.next_power_of_2(x.shape[1]))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graph = None

    def forward(self, x):
        if self.graph is None:
            self.static_x = x.contiguous().clone()
            self.static_y = torch.empty_like(self.static_x)
            _launch(self.static_x, self.static_y)  # compile outside the capture
            torch.cuda.synchronize()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                _launch(self.static_x, self.static_y)
        self.graph.replay()
        return self.static_y.clone()
