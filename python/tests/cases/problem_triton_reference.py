# Test problem whose reference Model runs a Triton kernel (a production kernel wrapped as the
# reference): the same softmax_kernel as examples/softmax/triton_candidate.py, at two shapes.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr,
                   NUM_CHUNKS: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, BLOCK)
    # Running max / sum per lane; -1e30 (not -inf) keeps exp(m - m_new) finite on masked lanes.
    m = tl.full([BLOCK], -1e30, tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) / row_sum
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        y = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block, NUM_CHUNKS=1)
        return y


def get_input_cases():
    return [{"name": "rows 4", "inputs": lambda: [torch.randn(4, 64) * 4.0], "weight": 1},
            {"name": "rows 16", "inputs": lambda: [torch.randn(16, 96) * 4.0], "weight": 1}]


def get_inputs():
    return [torch.randn(4, 64) * 4.0]


def get_init_inputs():
    return []
