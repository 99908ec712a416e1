# liger-kernel's rotary position embedding (Triton) on Llama-3-8B's attention (32 query heads,
# 8 key/value heads, head_dim 128), bf16 q/k in the layout a q/k projection gives
# ((batch, seq, heads, dim) viewed as (batch, heads, seq, dim)), fp32 cos/sin per position.
# liger rotates in place: both sides work on copies, the inputs stay as they were. Needs
# `pip install liger-kernel`. Seed: 3_RoPE.triton.py (the same kernel).
import torch
import torch.nn as nn
from liger_kernel.ops.rope import rope_forward

Q_HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128
# (batch, seq_len): decode steps (one new token per sequence) and one prefill.
CASES = [("decode 1", 1, 1, 2), ("decode 32", 32, 1, 2), ("decode 256", 256, 1, 2),
         ("prefill 4096", 1, 4096, 1)]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, cos, sin):
        q, k, _, _ = rope_forward(q.clone(), k.clone(), cos, sin)
        return q, k


def _inputs(batch: int, seq: int) -> list:
    q = torch.randn(batch, seq, Q_HEADS, HEAD_DIM, dtype=torch.bfloat16).transpose(1, 2)
    k = torch.randn(batch, seq, KV_HEADS, HEAD_DIM, dtype=torch.bfloat16).transpose(1, 2)
    # each sequence at its own position (decode) or positions 0..seq-1 (prefill)
    pos = torch.randint(0, 8192, (batch, 1)) if seq == 1 else torch.arange(seq)[None, :]
    inv_freq = 1.0 / (500000.0 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
    freqs = pos.float()[..., None] * inv_freq
    emb = torch.cat([freqs, freqs], dim=-1)
    return [q, k, emb.cos(), emb.sin()]


def get_input_cases():
    return [{"name": name, "weight": w, "inputs": lambda b=b, s=s: _inputs(b, s)}
            for name, b, s, w in CASES]


def get_inputs():
    return _inputs(32, 1)


def get_init_inputs():
    return []
