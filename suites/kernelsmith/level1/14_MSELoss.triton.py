# triton seed for 14_MSELoss.py: kernel 1 writes one partial sum of squared differences per
# BLOCK_SIZE * CHUNKS elements; kernel 2 (one program) sums the partials and divides by n.
import torch
import torch.nn as nn
import triton
import triton.language as tl

# EVOLVE-BLOCK-START
BLOCK_SIZE = 256
CHUNKS = 1  # ks:tune CHUNKS=[1, 2, 4, 8, 16, 32]
NUM_WARPS = 4
REDUCE_BLOCK = 1024
REDUCE_WARPS = 4


@triton.jit
def sq_diff_partial_kernel(a_ptr, b_ptr, part_ptr, n, BLOCK: tl.constexpr,
                           NUM_CHUNKS: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for chunk in range(NUM_CHUNKS):
        idx = (pid * NUM_CHUNKS + chunk) * BLOCK + offs
        mask = idx < n
        d = tl.load(a_ptr + idx, mask=mask, other=0.0) - tl.load(b_ptr + idx, mask=mask, other=0.0)
        acc += d * d
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def sum_div_kernel(v_ptr, out_ptr, n_parts, divisor, BLOCK: tl.constexpr,
                   NUM_CHUNKS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for chunk in range(NUM_CHUNKS):
        idx = chunk * BLOCK + offs
        acc += tl.load(v_ptr + idx, mask=idx < n_parts, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / divisor)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        a = predictions.contiguous()
        b = targets.contiguous()
        n = a.numel()
        n_parts = triton.cdiv(n, BLOCK_SIZE * CHUNKS)
        parts = torch.empty(n_parts, dtype=torch.float32, device=a.device)
        out = torch.empty((), dtype=torch.float32, device=a.device)
        sq_diff_partial_kernel[(n_parts,)](a, b, parts, n, BLOCK=BLOCK_SIZE, NUM_CHUNKS=CHUNKS,
                                           num_warps=NUM_WARPS)
        sum_div_kernel[(1,)](parts, out, n_parts, float(n), BLOCK=REDUCE_BLOCK,
                             NUM_CHUNKS=triton.cdiv(n_parts, REDUCE_BLOCK),
                             num_warps=REDUCE_WARPS)
        return out
# EVOLVE-BLOCK-END
