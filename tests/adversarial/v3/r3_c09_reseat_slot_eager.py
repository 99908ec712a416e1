# Family 5 (slowing the reference), eager variant of r3_c05 with no k = 1 trick. Exploit: the
# two models share the timed slot tensors and nothing checks a slot's metadata after a
# candidate call. forward has a host read (y[0, 0].item()), so both models are timed eagerly
# (timing_cuda._EagerRunner). After the audit's cached_output check (one object twice), every
# contiguous input is re-seated with Tensor.set_() onto a column-major copy of itself: the
# reference's torch.softmax then runs a transposing .contiguous() copy before every call in the
# blocks after the candidate's first (ref blocks 2 and the signed block, and all steady blocks),
# while the candidate's strided kernel reads column-major tiles directly. Expected on an H100
# (r1a_softmax_big): status ok (not_graph_capturable info), speedup ~1.3-1.6x from ~1.0x.
import weakref

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_strided_kernel(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn,
                           BM: tl.constexpr, BN: tl.constexpr):
    # softmax over dim 1 of an (M, N) tensor of any strides: BM rows per program, two passes
    # (online max/sum, then normalise); tiles [BM, BN] read coalesced whichever dim is unit-stride
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    row_ok = rm < M
    m_i = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BM,), dtype=tl.float32)
    for n0 in range(0, N, BN):
        cols = n0 + rn
        msk = row_ok[:, None] & (cols[None, :] < N)
        v = tl.load(x_ptr + rm[:, None].to(tl.int64) * sxm + cols[None, :].to(tl.int64) * sxn,
                    mask=msk, other=float("-inf"))
        m_new = tl.maximum(m_i, tl.max(v, axis=1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        l_i = l_i * tl.exp(m_i - m_safe) + tl.sum(tl.exp(v - m_safe[:, None]), axis=1)
        m_i = m_new
    m_safe = tl.where(m_i == float("-inf"), 0.0, m_i)
    inv = 1.0 / l_i
    for n0 in range(0, N, BN):
        cols = n0 + rn
        msk = row_ok[:, None] & (cols[None, :] < N)
        v = tl.load(x_ptr + rm[:, None].to(tl.int64) * sxm + cols[None, :].to(tl.int64) * sxn,
                    mask=msk, other=float("-inf"))
        p = tl.exp(v - m_safe[:, None]) * inv[:, None]
        tl.store(y_ptr + rm[:, None].to(tl.int64) * sym + cols[None, :].to(tl.int64) * syn, p,
                 mask=msk)


def softmax_rows(x):
    M, N = x.shape
    y = torch.empty((M, N), device=x.device, dtype=torch.float32)
    BM, BN = 32, 128
    softmax_strided_kernel[(triton.cdiv(M, BM),)](x, y, M, N, x.stride(0), x.stride(1),
                                                  y.stride(0), y.stride(1), BM=BM, BN=BN)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._last = None
        self._armed = False

    def forward(self, x):
        if self._last is not None and self._last() is x:
            self._armed = True
        self._last = weakref.ref(x)
        if self._armed and x.dim() == 2 and x.is_contiguous() and x.shape[0] > 1:
            M, N = x.shape
            col = torch.empty_strided((M, N), (1, M), device=x.device, dtype=x.dtype)
            col.copy_(x)
            x.set_(col.untyped_storage(), 0, (M, N), (1, M))
        y = softmax_rows(x)
        if y.is_cuda:
            y[0, 0].item()  # no CUDA graph: eager timing
        return y
