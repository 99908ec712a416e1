# Family 5 (slowing the reference). Exploit: the evaluator builds Model(*init) and
# ModelNew(*init) from the *same* init tensors (to_device keeps a tensor already on the
# device), so a tensor init input the reference keeps as a buffer is the very object ModelNew
# receives. In __init__ the candidate keeps a private contiguous copy and re-seats the shared
# tensor with Tensor.set_() onto a 32x larger storage with stride 32 (same values, same shape,
# same data_ptr semantics for the reference: it still computes x + bias correctly). Every
# reference call now reads its bias one element per 128-byte line (8x the DRAM sectors on a
# GPU, cache-hostile on a CPU) and the timed reference is slower. Why it passes: nothing the
# evaluator snapshots covers the reference model's parameters/buffers (the integrity guard
# watches functions, settings, process state; the reference outputs of the trials were
# computed before the candidate was imported and stay right; the timed checks compare with a
# reference call on the same values, which is still correct). The candidate's own kernel is an
# honest fused add.
import torch
import torch.nn as nn
import triton
import triton.language as tl

STRIDE = 32


@triton.jit
def add_kernel(x_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, x + b, mask=m)


class ModelNew(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.register_buffer("b", bias.detach().clone().contiguous())
        with torch.no_grad():
            n = bias.numel()
            store = torch.zeros(n * STRIDE, dtype=bias.dtype, device=bias.device)
            store[::STRIDE].copy_(bias.reshape(-1))
            bias.set_(store.untyped_storage(), 0, tuple(bias.shape),
                      (bias.shape[1] * STRIDE, STRIDE))

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, self.b, y, n, BLOCK=1024)
        return y
