# Honest (unusual): exact int64 row sums of an int32 input in two stages (per-chunk partial
# sums into a workspace, then a reduction of the partials), with the integer output on an
# integer-input problem whose timed inputs are never refreshed. Must stay accepted by fixes
# for r2_c06/r2_c07 (exact integer comparison, refreshed integer slots).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_kernel(x_ptr, part_ptr, N, CHUNKS, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    offs = c * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * N + offs, mask=offs < N, other=0).to(tl.int64)
    tl.store(part_ptr + row * CHUNKS + c, tl.sum(v, axis=0))


@triton.jit
def final_kernel(part_ptr, out_ptr, CHUNKS, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.int64)
    for c0 in range(0, CHUNKS, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + row * CHUNKS + offs, mask=offs < CHUNKS, other=0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        BLOCK = 4096
        chunks = triton.cdiv(N, BLOCK)
        part = torch.empty(M, chunks, dtype=torch.int64, device=x.device)
        out = torch.empty(M, dtype=torch.int64, device=x.device)
        partial_kernel[(M, chunks)](x, part, N, chunks, BLOCK=BLOCK)
        final_kernel[(M,)](part, out, chunks, BLOCK=16)
        return out
