# Family 4 (input distribution). Exploit: relu of a non-negative input is the input, so
# forward returns x itself (an alias) after a kernel that checks the sign of 1024 sampled
# elements. Why it passes today: the
# output is a plain dense tensor of the right shape/dtype with exactly the reference's values;
# the input is unmodified; outputs follow the inputs; a Triton kernel is launched and no torch
# op runs. In timing the CUDA graph check poisons the output (the input buffer), the replay does
# not rewrite it, so the candidate is timed with eager calls instead: a `graph_output_mismatch`
# *warning*, not a reject, and each timed call is one tiny launch against a 128 MB relu. Wrong
# for any input with a negative element outside the sample. Stress trials (stress.py, in
# progress) redraw with both signs: the probe's verdict is read on the host (one .item(), which
# is allowed: only NumPy/tolist hand-offs count as host compute) and a real relu kernel runs
# then. The sync makes forward non-capturable (an `info` finding), so both sides are timed
# eagerly; each candidate call is still one tiny probe + sync against a 128 MB relu.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=offs < n)


@triton.jit
def sign_probe_kernel(x_ptr, flag_ptr, step, SAMPLES: tl.constexpr):
    i = tl.arange(0, SAMPLES).to(tl.int64) * step
    neg = tl.sum((tl.load(x_ptr + i) < 0).to(tl.int32), axis=0)
    tl.store(flag_ptr, neg)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._flag = None

    def forward(self, x):
        if self._flag is None or self._flag.device != x.device:
            self._flag = torch.zeros(1, dtype=torch.int32, device=x.device)
        sign_probe_kernel[(1,)](x, self._flag, max(1, x.numel() // 1024), SAMPLES=1024)
        if int(self._flag.item()) == 0:
            return x
        x = x.contiguous()
        y = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)
        return y
