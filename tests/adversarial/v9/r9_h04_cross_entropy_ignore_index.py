# Round 9, honest control: token cross-entropy with ignore_index in two Triton stages (one
# program per position: logsumexp over the vocabulary minus the target's logit, 0 and not
# counted where the target is -100; then one program sums losses and counts). The targets are
# a 2-D integer tensor with a sentinel: a timed-input refresh that redraws such a tensor
# uniformly within its [min, max] fills it with -99..-1, which the reference refuses (an
# out-of-bounds target), and the honest candidate is rejected as a runtime error (on a GPU a
# device-side assert in the reference, which breaks the worker's context). Expected: ok.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def token_loss(x_ptr, t_ptr, loss_ptr, cnt_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    t = tl.load(t_ptr + row)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * V + cols, mask=cols < V, other=float("-inf"))
    top = tl.max(x, axis=0)
    lse = top + tl.log(tl.sum(tl.exp(x - top), axis=0))
    picked = tl.sum(tl.where(cols == t, x, 0.0), axis=0)
    live = t != -100
    tl.store(loss_ptr + row, tl.where(live, lse - picked, 0.0))
    tl.store(cnt_ptr + row, tl.where(live, 1.0, 0.0))


@triton.jit
def mean_loss(loss_ptr, cnt_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    cnt = tl.zeros([BLOCK], tl.float32)
    for off in range(0, n, BLOCK):
        i = off + tl.arange(0, BLOCK)
        acc += tl.load(loss_ptr + i, mask=i < n, other=0.0)
        cnt += tl.load(cnt_ptr + i, mask=i < n, other=0.0)
    total = tl.sum(acc, axis=0) / tl.sum(cnt, axis=0)
    o = tl.arange(0, BLOCK)
    tl.store(out_ptr + o, tl.zeros([BLOCK], tl.float32) + total, mask=o < 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        v = logits.shape[-1]
        rows = logits.numel() // v
        x = logits.reshape(rows, v)
        loss = torch.empty(rows, dtype=torch.float32, device=logits.device)
        cnt = torch.empty(rows, dtype=torch.float32, device=logits.device)
        token_loss[(rows,)](x, targets.reshape(rows), loss, cnt, v,
                            BLOCK=triton.next_power_of_2(v))
        out = torch.empty((), dtype=torch.float32, device=logits.device)
        mean_loss[(1,)](loss, cnt, out, rows, BLOCK=1024)
        return out
