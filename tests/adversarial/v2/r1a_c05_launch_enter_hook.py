# r1a cheat, family 1. Exploit: the GEMM runs as torch.addmm inside a Triton launch hook
# (triton.knobs.runtime.launch_enter_hook, called by the compiled launcher right before
# cuLaunchKernel). That happens inside JITFunction.run, i.e. inside the worker's
# LaunchRecorder.launch(), where OpCounter ignores every aten op as "the launcher's
# bookkeeping". The launched Triton kernel only applies ReLU in place. knobs are not among the
# integrity guard's watched attributes. GPU only (the interpreter calls no launch hooks).
# Expected today: ok (low_custom_share warning at most).
import torch
import torch.nn as nn
import triton
import triton.knobs
import triton.language as tl

_PENDING: list = []


def _on_launch(*_args, **_kwargs):
    while _PENDING:
        _PENDING.pop()()


triton.knobs.runtime.launch_enter_hook.add(_on_launch)


@triton.jit
def relu_inplace_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(y_ptr + offs, mask=m), 0.0), mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = x.contiguous()
        w, b = self.linear.weight, self.linear.bias
        y = torch.empty(x.shape[0], w.shape[0], dtype=x.dtype, device=x.device)
        _PENDING.append(lambda: torch.addmm(b, x, w.t(), out=y))
        n = y.numel()
        relu_inplace_kernel[(triton.cdiv(n, 1024),)](y, n, BLOCK=1024)
        _PENDING.clear()
        return y
