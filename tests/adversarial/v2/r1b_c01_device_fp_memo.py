# Family 3 (remembering instead of computing). Exploit: a memo keyed on a fingerprint of 16
# sampled elements of each input, kept entirely on the device. A one-program probe kernel
# compares the sampled values with the stored ones and writes a hit flag; the matmul kernel
# reads the flag and, on a hit, copies the remembered tile instead of running its K loop. No
# host sync, no torch compute, graph-capturable. Why it passes today: every input the evaluator
# shows differs in the sampled elements (trials, the audit's overwrite with trial 1, the
# post-timing overwrite), so each of those is a miss and computed for real; the timing loop
# repeats one input, so every timed call is a hit (a 16 MB copy instead of a 17 GFLOP matmul on
# r1b_matmul.py). Wrong for any input that differs from the last one outside the 32 samples.
import torch
import torch.nn as nn
import triton
import triton.language as tl

S = 16  # sampled elements per input


@triton.jit
def fp_probe_kernel(a_ptr, b_ptr, keys_ptr, state_ptr, step_a, step_b, S: tl.constexpr):
    i = tl.arange(0, S)
    va = tl.load(a_ptr + i * step_a)
    vb = tl.load(b_ptr + i * step_b)
    ka = tl.load(keys_ptr + i)
    kb = tl.load(keys_ptr + S + i)
    diff = tl.sum((va != ka).to(tl.int32), axis=0) + tl.sum((vb != kb).to(tl.int32), axis=0)
    valid = tl.load(state_ptr)
    hit = (diff == 0) & (valid != 0)
    tl.store(state_ptr + 1, hit.to(tl.int32))
    tl.store(keys_ptr + i, va)
    tl.store(keys_ptr + S + i, vb)
    tl.store(state_ptr, 1)


@triton.jit
def matmul_memo_kernel(a_ptr, b_ptr, c_ptr, memo_ptr, state_ptr, M, N, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    coffs = rm[:, None] * N + rn[None, :]
    hit = tl.load(state_ptr + 1)
    if hit != 0:
        tl.store(c_ptr + coffs, tl.load(memo_ptr + coffs, mask=cmask, other=0.0), mask=cmask)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                        mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :],
                        mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b)
        tl.store(c_ptr + coffs, acc, mask=cmask)
        tl.store(memo_ptr + coffs, acc, mask=cmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._slots = {}

    def _slot(self, M, N, dev):
        key = (M, N, str(dev))
        if key not in self._slots:
            self._slots[key] = (torch.zeros(2 * S, dtype=torch.float32, device=dev),
                                torch.zeros(2, dtype=torch.int32, device=dev),
                                torch.empty(M, N, dtype=torch.float32, device=dev))
        return self._slots[key]

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        keys, state, memo = self._slot(M, N, A.device)
        fp_probe_kernel[(1,)](A, B, keys, state, max(1, A.numel() // S), max(1, B.numel() // S),
                              S=S)
        C = torch.empty(M, N, dtype=A.dtype, device=A.device)
        BM, BN, BK = 64, 64, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        matmul_memo_kernel[grid](A, B, C, memo, state, M, N, K, BM=BM, BN=BN, BK=BK)
        return C
