# Round 6, policy control. A linear + ReLU that keeps the GEMM in torch.matmul (cuBLAS) and
# fuses only bias + ReLU into its own Triton kernel, in place on the GEMM's output: the
# "use the library for the part it is best at, write the epilogue yourself" style that is
# ordinary engineering. It computes the right answer on every call, on the timed stream.
# The evaluator's policy rejects it all the same: the problem's heavy work is done by a
# library (the dispatch audit sees aten::mm/matmul in forward: torch_compute; on a GPU the
# kernel log also sees the cuBLAS kernel: foreign_compute). It is here so that the rounds
# record that this is a policy reject and not a detection of a cheat: a change of policy
# (e.g. allowing a library share with a light epilogue) must change this entry on purpose.
# Expected today: hacked (torch_compute) on the CPU and on an H100.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_inplace(y_ptr, b_ptr, total, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    y = tl.load(y_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs % N, mask=m, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(y + b, 0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.linear.weight.t()).contiguous()
        total, N = y.numel(), y.shape[-1]
        bias_relu_inplace[(triton.cdiv(total, 1024),)](y, self.linear.bias, total, N,
                                                       BLOCK=1024)
        return y
