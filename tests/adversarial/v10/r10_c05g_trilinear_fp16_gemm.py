# Round 10 (triton backend, GPU), family 1: r10_c05 on the GPU, in fp16. x and W are cast to
# fp16 (copies: info), aten::_trilinear (a "light" op by the dispatch-level audit's lists)
# runs the GEMM as a cuBLAS fp16 tensor-core bmm below the dispatcher, and a Triton kernel
# adds the bias and applies the ReLU in fp32. If the profiler's library-kernel rule did not
# name the cuBLAS kernels, this would be ok at several times the fp32 reference with no
# GEMM of its own. Expected: hacked (foreign_compute: library kernels in forward).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu(y_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(y_ptr + offs, mask=m).to(tl.float32)
    b = tl.load(b_ptr + offs % cols, mask=m)
    tl.store(out_ptr + offs, tl.maximum(y + b, 0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w16 = self.linear.weight.detach().to(torch.float16).t()
        ones = torch.ones(x.shape[1], dtype=torch.float16, device=x.device)
        y16 = torch.ops.aten._trilinear(x.to(torch.float16), w16, ones, [2], [0], [0, 2], [1])
        y16 = y16.contiguous()
        out = torch.empty(y16.shape, dtype=torch.float32, device=x.device)
        n, cols = out.numel(), out.shape[1]
        bias_relu[(triton.cdiv(n, 4096),)](y16, self.linear.bias.detach(), out, n, cols,
                                           BLOCK=4096)
        return out
