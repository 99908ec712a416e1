# Honest: softmax written into a column-major output (torch.empty_strided(..., (1, M))): a dense
# strided tensor with the reference's shape and dtype but other strides, read and written by a
# kernel that takes any strides. Outputs with unusual strides must be accepted (ok).
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
    def forward(self, x):
        M, N = x.shape
        y = torch.empty_strided((M, N), (1, M), device=x.device, dtype=torch.float32)
        softmax_strided_kernel[(triton.cdiv(M, 32),)](x, y, M, N, x.stride(0), x.stride(1),
                                                      y.stride(0), y.stride(1), BM=32, BN=128)
        return y
