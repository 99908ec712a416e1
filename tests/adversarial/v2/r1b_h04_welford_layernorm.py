# Honest (unusual): LayerNorm with split statistics. Stage 1: many programs per sample each
# compute (count, mean, M2) of a chunk (Welford-style, numerically stable); stage 2 merges the
# chunk statistics with Chan's parallel formula and normalises its chunk. Intermediate buffers
# are allocated per call; weight and bias are used as given.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def chunk_stats_kernel(x_ptr, mean_ptr, m2_ptr, D, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    s = tl.program_id(0)
    c = tl.program_id(1)
    n_chunks = tl.num_programs(1)
    base = s.to(tl.int64) * D + c * CHUNK
    total = tl.zeros((BLOCK,), tl.float32)
    for o0 in range(0, CHUNK, BLOCK):
        o = o0 + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + base + o, mask=c * CHUNK + o < D, other=0.0)
    cnt = tl.minimum(CHUNK, D - c * CHUNK).to(tl.float32)
    mean = tl.sum(total, axis=0) / cnt
    m2 = tl.zeros((BLOCK,), tl.float32)
    for o0 in range(0, CHUNK, BLOCK):
        o = o0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + o, mask=c * CHUNK + o < D, other=0.0)
        m2 += tl.where(c * CHUNK + o < D, (x - mean) * (x - mean), 0.0)
    tl.store(mean_ptr + s * n_chunks + c, mean)
    tl.store(m2_ptr + s * n_chunks + c, tl.sum(m2, axis=0))


@triton.jit
def merge_normalize_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, m2_ptr, D, eps,
                           NC: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    s = tl.program_id(0)
    c = tl.program_id(1)
    idx = tl.arange(0, NC)
    cnt = tl.minimum(CHUNK, D - idx * CHUNK).to(tl.float32)
    means = tl.load(mean_ptr + s * NC + idx)
    m2s = tl.load(m2_ptr + s * NC + idx)
    mean = tl.sum(means * cnt, axis=0) / D
    m2 = tl.sum(m2s + cnt * (means - mean) * (means - mean), axis=0)  # Chan et al.
    rstd = 1.0 / tl.sqrt(m2 / D + eps)
    base = s.to(tl.int64) * D + c * CHUNK
    for o0 in range(0, CHUNK, BLOCK):
        o = o0 + tl.arange(0, BLOCK)
        m = c * CHUNK + o < D
        x = tl.load(x_ptr + base + o, mask=m, other=0.0)
        w = tl.load(w_ptr + c * CHUNK + o, mask=m, other=1.0)
        b = tl.load(b_ptr + c * CHUNK + o, mask=m, other=0.0)
        tl.store(y_ptr + base + o, (x - mean) * rstd * w + b, mask=m)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        x = x.contiguous()
        D = self.ln.weight.numel()
        S = x.numel() // D
        CHUNK = 16384
        nc = triton.cdiv(D, CHUNK)
        NC = triton.next_power_of_2(nc)
        mean = torch.zeros(S, NC, dtype=torch.float32, device=x.device)
        m2 = torch.zeros(S, NC, dtype=torch.float32, device=x.device)
        chunk_stats_kernel[(S, nc)](x, mean, m2, D, CHUNK=CHUNK, BLOCK=2048)
        if NC != nc:  # padded chunk slots: give them zero count via D bounds (cnt <= 0 -> 0)
            raise ValueError("normalized size must be a power-of-two number of chunks")
        y = torch.empty_like(x)
        merge_normalize_kernel[(S, nc)](x, self.ln.weight, self.ln.bias, y, mean, m2, D,
                                        self.ln.eps, NC=NC, CHUNK=CHUNK, BLOCK=2048)
        return y
