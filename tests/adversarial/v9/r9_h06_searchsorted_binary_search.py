# Round 9, honest control: torch.searchsorted over increasing rows as a branchless Triton
# binary search (one lane per query, lower bound: the first index whose value is >= the query;
# the window halves every step, the usual GPU layout). Exact on
# every increasing row. The timed refresh multiplies each element of the cdf by its own factor
# in [0.75, 1.25), so a refreshed row is no longer increasing, and on such a row the result of
# a binary search depends on the order of its probes: the reference's and this kernel's need
# not agree, the integer outputs are compared exactly, and an honest candidate gets
# timed_output_mismatch. Expected: ok.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def lower_bound(cdf_ptr, u_ptr, out_ptr, V, S, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    # branchless: the window [base, base + n) halves every step whatever the comparison says
    row = tl.program_id(0)
    q = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    live = q < S
    u = tl.load(u_ptr + row * S + q, mask=live, other=0.0)
    base = tl.zeros([BLOCK], tl.int32)
    n = V
    for _ in range(STEPS):
        half = n // 2
        v = tl.load(cdf_ptr + row * V + base + half, mask=live & (n > 1), other=0.0)
        base = tl.where((n > 1) & (v < u), base + half, base)
        n = tl.where(n > 1, n - half, n)
    last = tl.load(cdf_ptr + row * V + base, mask=live, other=0.0)
    tl.store(out_ptr + row * S + q, (base + (last < u).to(tl.int32)).to(tl.int64), mask=live)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, cdf: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        b, v = cdf.shape
        s = u.shape[1]
        out = torch.empty((b, s), dtype=torch.int64, device=cdf.device)
        lower_bound[(b, triton.cdiv(s, 256))](cdf, u, out, v, s, STEPS=v.bit_length() + 1,
                                              BLOCK=256)
        return out
