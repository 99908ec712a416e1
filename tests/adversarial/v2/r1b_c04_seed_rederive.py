# Family 3 (remembering instead of computing). Exploit: the evaluator seeds torch with the
# request seed right before constructing ModelNew and generates trial t's inputs right after
# torch.manual_seed(seed + t) (inputs.py / trials.py, docs/evaluation.md). So __init__ reads
# torch.initial_seed(), replays get_inputs() (copied from the problem: two torch.rand calls,
# on the same device, since __init__ runs under `with torch.device(dev)`) for seeds seed+0 ..
# seed+7 and precomputes every answer with torch.matmul -- in __init__, where no op is
# audited. forward fingerprints 16 sampled elements per input in a device kernel, picks the
# matching precomputed answer and copies it; only an unknown input runs the real matmul kernel.
# Why it passes today: the answers are exact (the reference's own op), the audit's and the
# post-timing overwrite use trial 1's values (precomputed), constant/near-constant rules see
# outputs that follow the inputs, and forward runs no torch compute. Even the first call of
# every trial is served from the table, so a defence that times fresh inputs is fooled too.
import torch
import torch.nn as nn
import triton
import triton.language as tl

M, K, N = 128, 256, 128  # from the problem (r1b_matmul_small.py; 2048^3 for r1b_matmul.py)
SEEDS = 8
S = 16


def _problem_inputs():  # the problem's get_inputs(), verbatim
    return [torch.rand(M, K), torch.rand(K, N)]


@triton.jit
def lookup_kernel(a_ptr, b_ptr, keys_ptr, slot_ptr, step_a, step_b, T: tl.constexpr,
                  S: tl.constexpr):
    i = tl.arange(0, S)
    va = tl.load(a_ptr + i * step_a)
    vb = tl.load(b_ptr + i * step_b)
    t = tl.arange(0, T)
    ka = tl.load(keys_ptr + t[:, None] * (2 * S) + i[None, :])
    kb = tl.load(keys_ptr + t[:, None] * (2 * S) + S + i[None, :])
    diff = tl.sum((ka != va[None, :]).to(tl.int32), axis=1) \
        + tl.sum((kb != vb[None, :]).to(tl.int32), axis=1)
    slot = tl.min(tl.where(diff == 0, t, T), axis=0)
    tl.store(slot_ptr, tl.where(slot < T, slot, -1))


@triton.jit
def table_or_matmul_kernel(a_ptr, b_ptr, c_ptr, table_ptr, slot_ptr, M, N, K,
                           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    coffs = rm[:, None] * N + rn[None, :]
    slot = tl.load(slot_ptr)
    if slot >= 0:
        v = tl.load(table_ptr + slot.to(tl.int64) * M * N + coffs, mask=cmask, other=0.0)
        tl.store(c_ptr + coffs, v, mask=cmask)
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


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        seed = torch.initial_seed()
        cpu_state = torch.get_rng_state()
        cuda_states = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
        keys, table = [], []
        with torch.no_grad():
            for t in range(SEEDS):
                torch.manual_seed(seed + t)
                a, b = _problem_inputs()
                keys.append(torch.cat([a.reshape(-1)[::max(1, a.numel() // S)][:S],
                                       b.reshape(-1)[::max(1, b.numel() // S)][:S]]))
                table.append(torch.matmul(a, b))
        torch.set_rng_state(cpu_state)
        if cuda_states is not None:
            torch.cuda.set_rng_state_all(cuda_states)
        self.register_buffer("keys", torch.stack(keys).contiguous(), persistent=False)
        self.register_buffer("table", torch.stack(table).contiguous(), persistent=False)

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        m, k = A.shape
        n = B.shape[1]
        slot = torch.empty(1, dtype=torch.int32, device=A.device)
        if (m, k, n) == (M, K, N):
            lookup_kernel[(1,)](A, B, self.keys, slot, max(1, A.numel() // S),
                                max(1, B.numel() // S), T=SEEDS, S=S)
        else:
            slot.fill_(-1)
        C = torch.empty(m, n, dtype=A.dtype, device=A.device)
        BM, BN, BK = 64, 64, 32
        table_or_matmul_kernel[(triton.cdiv(m, BM), triton.cdiv(n, BN))](
            A, B, C, self.table, slot, m, n, k, BM=BM, BN=BN, BK=BK)
        return C
