"""`class_tokens`: the module class's own code only, so that a large inlined helper shared by
unrelated modules does not make them near-duplicates (MinHash over token 5-grams)."""

from __future__ import annotations

from pathlib import Path

from kernelsmith_curate import normalize
from tests.curate.helpers import extract

HELPER = '''import torch
import torch.nn as nn
import torch.nn.functional as F


def make_block(channels, kernel_size=3, stride=1, dilation=1, groups=1, act="relu"):
    """A large helper that every module of this repository inlines."""
    padding = ((stride - 1) + dilation * (kernel_size - 1)) // 2
    layers = [nn.Conv2d(channels, channels, kernel_size, stride, padding, dilation, groups,
                        bias=False), nn.BatchNorm2d(channels)]
    if act == "relu":
        layers.append(nn.ReLU(inplace=True))
    elif act == "gelu":
        layers.append(nn.GELU())
    elif act == "silu":
        layers.append(nn.SiLU(inplace=True))
    elif act == "sigmoid":
        layers.append(nn.Sigmoid())
    elif act == "tanh":
        layers.append(nn.Tanh())
    else:
        raise ValueError(f"unknown activation {act}")
    for i, layer in enumerate(layers):
        if isinstance(layer, nn.Conv2d):
            nn.init.kaiming_normal_(layer.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(layer, nn.BatchNorm2d):
            nn.init.ones_(layer.weight)
            nn.init.zeros_(layer.bias)
    if len(layers) > 2 and stride > 1 and kernel_size > 1 and groups == 1:
        layers.insert(0, nn.Identity())
    return nn.Sequential(*_checked(layers, channels, kernel_size, stride))


def _checked(layers, channels, kernel_size, stride):
    if channels <= 0 or kernel_size <= 0 or stride <= 0:
        raise ValueError(f"bad block: {channels} {kernel_size} {stride}")
    out = []
    for layer in layers:
        if isinstance(layer, nn.Conv2d) and layer.in_channels != channels:
            raise ValueError(f"conv expects {layer.in_channels} channels, not {channels}")
        elif isinstance(layer, nn.BatchNorm2d) and layer.num_features != channels:
            raise ValueError(f"norm expects {layer.num_features} channels, not {channels}")
        elif isinstance(layer, nn.Identity) and len(out) > 0:
            continue
        out.append(layer)
    if not out:
        raise ValueError("empty block")
    if len(out) > 8:
        raise ValueError(f"too many layers: {len(out)}")
    return _fused(out)


def _fused(layers):
    out = []
    i = 0
    while i < len(layers):
        layer = layers[i]
        nxt = layers[i + 1] if i + 1 < len(layers) else None
        if isinstance(layer, nn.Conv2d) and isinstance(nxt, nn.BatchNorm2d):
            out.append(nn.Sequential(layer, nxt))
            i += 2
        elif isinstance(layer, nn.Identity):
            i += 1
        elif isinstance(layer, (nn.ReLU, nn.GELU, nn.SiLU, nn.Sigmoid, nn.Tanh)):
            out.append(layer)
            i += 1
        else:
            out.append(layer)
            i += 1
    if len(out) == 1 and isinstance(out[0], nn.Sequential):
        return list(out[0])
    return out
'''

A = '''import torch.nn as nn
from helpers import make_block


class SqueezeGate(nn.Module):
    def __init__(self, channels, reduction=4):
        super().__init__()
        self.block = make_block(channels)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        y = self.block(x)
        w = self.pool(y).flatten(1)
        w = self.fc2(self.fc1(w).relu()).sigmoid()
        return y * w[:, :, None, None]
'''

B = '''import torch
import torch.nn as nn
from helpers import make_block


class DualPathMix(nn.Module):
    def __init__(self, dim, alpha=0.5):
        super().__init__()
        self.left = make_block(dim, kernel_size=5, act="gelu")
        self.right = make_block(dim, kernel_size=1, act="silu")
        self.alpha = nn.Parameter(torch.full((1,), alpha))

    def forward(self, inp):
        a = self.left(inp)
        b = self.right(inp)
        mixed = self.alpha * a + (1 - self.alpha) * b
        return torch.cat([mixed, a - b], dim=1).mean(dim=1, keepdim=True) + inp
'''

# A renamed copy of A: other names, other comments, same code.
A_RENAMED = '''import torch.nn as nn
from helpers import make_block


class ChannelGate(nn.Module):
    def __init__(self, ch, r=4):
        super().__init__()
        # the same module under other names
        self.block = make_block(ch)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(ch, ch // r)
        self.fc2 = nn.Linear(ch // r, ch)

    def forward(self, t):
        u = self.block(t)
        g = self.pool(u).flatten(1)
        g = self.fc2(self.fc1(g).relu()).sigmoid()
        return u * g[:, :, None, None]
'''


def _jaccard5(a: list[str], b: list[str]) -> float:
    def grams(t: list[str]) -> set[tuple[str, ...]]:
        return {tuple(t[i:i + 5]) for i in range(max(1, len(t) - 4))}
    ga, gb = grams(a), grams(b)
    return len(ga & gb) / len(ga | gb)


def test_class_tokens_ignore_shared_inlined_helpers(tmp_path: Path) -> None:
    files = {"helpers.py": HELPER, "a.py": A, "b.py": B, "a_renamed.py": A_RENAMED}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    recs = extract(tmp_path, [tmp_path / n for n in ("a.py", "b.py", "a_renamed.py")])
    by = {r["class"]: r for r in recs}
    a, b, ren = by["SqueezeGate"], by["DualPathMix"], by["ChannelGate"]
    assert all(r["status"] == "ok" for r in (a, b, ren)), recs
    assert all("def make_block" in r["source"] for r in (a, b, ren))  # the helper is inlined

    # The whole self-contained sources look alike (the helper dominates), ...
    assert _jaccard5(a["tokens"], b["tokens"]) >= 0.7
    # ... but the classes' own code does not.
    assert _jaccard5(a["class_tokens"], b["class_tokens"]) < 0.3

    # class_tokens cover the class only, normalized like tokens.
    assert a["class_tokens"][:2] == ["class", "ID"]
    assert "make_block" not in a["class_tokens"] and "def" in a["class_tokens"]
    assert len(a["class_tokens"]) < len(a["tokens"])
    assert a["class_tokens"] == normalize.tokens(A.split("\n\n\n", 1)[1])

    # A renamed copy has the same class_tokens (and tokens).
    assert ren["class_tokens"] == a["class_tokens"]
    assert ren["tokens"] == a["tokens"]
    assert _jaccard5(ren["class_tokens"], a["class_tokens"]) == 1.0


def test_rejected_records_have_empty_class_tokens(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import torch.nn as nn\nimport einops\n\n\n"
                                   "class E(nn.Module):\n    def forward(self, x):\n"
                                   "        return einops.rearrange(x, 'a b -> b a')\n",
                                   encoding="utf-8")
    (rec,) = extract(tmp_path, [tmp_path / "m.py"])
    assert rec["status"] == "rejected" and rec["class_tokens"] == [] and rec["tokens"] == []
