# triton seed for 13_CrossEntropyLoss.py: kernel 1 computes each row's loss
# (logsumexp - logit[target]) with an online logsumexp over BLOCK-wide chunks; kernel 2 (one
# program) averages the per-row losses.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 256
NUM_WARPS = 4
REDUCE_BLOCK = 1024
REDUCE_WARPS = 4


@triton.jit
def ce_rows_kernel(x_ptr, t_ptr, loss_ptr, n_cols, BLOCK: tl.constexpr, NUM_CHUNKS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], -1e30, tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for chunk in range(NUM_CHUNKS):
        cols = chunk * BLOCK + offs
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))
    target = tl.load(t_ptr + row)
    tl.store(loss_ptr + row, lse - tl.load(x_row + target))


@triton.jit
def mean_kernel(v_ptr, out_ptr, n, BLOCK: tl.constexpr, NUM_CHUNKS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for chunk in range(NUM_CHUNKS):
        idx = chunk * BLOCK + offs
        acc += tl.load(v_ptr + idx, mask=idx < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        targets = targets.contiguous()
        rows, cols = logits.shape
        losses = torch.empty(rows, dtype=torch.float32, device=logits.device)
        out = torch.empty((), dtype=torch.float32, device=logits.device)
        block = min(BLOCK_SIZE, triton.next_power_of_2(cols))
        ce_rows_kernel[(rows,)](logits, targets, losses, cols, BLOCK=block,
                                NUM_CHUNKS=triton.cdiv(cols, block), num_warps=NUM_WARPS)
        mean_kernel[(1,)](losses, out, rows, BLOCK=REDUCE_BLOCK,
                          NUM_CHUNKS=triton.cdiv(rows, REDUCE_BLOCK), num_warps=REDUCE_WARPS)
        return out
# EVOLVE-BLOCK-END
