"""Input deduction: a first guess of constructor arguments and input shapes, and repairs
driven by the error message the last try raised. Pure functions; child.py runs the tries.

First guess. Constructor parameters without a default get a value by name (dims and
channels 16, heads 2, kernel 3, stride/dilation/groups 1, dropout 0.0, eps 1e-5, ...);
dropout-like parameters with a non-zero default are set to 0.0 (a problem must be
deterministic). Forward inputs (one per required positional parameter) start as float
tensors shaped by the operators used: conv3d/pool3d (2,16,8,8,8), conv2d/pool2d/batchnorm2d
(2,16,16,16), conv1d (2,16,32), embedding only int64 (2,8), otherwise (2,8,16).

Repairs (first that applies): channel count ("to have 3 channels"), matmul inner size
("mat1 and mat2 shapes"), rank ("Expected 4D input", "not enough values to unpack"),
normalized shape, batch-norm channels, broadcasting ("size of tensor a (8) must match"),
too-small spatial size, fixed model input size ("doesn't match model (224)"), integer
indices and targets, index range, float where int64 was given, divisibility by heads, a
missing forward argument. When no repair applies, or it leads to a spec already tried, the
next untried shape template is used.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

DIM = 16


@dataclass
class TensorSpec:
    shape: list[int]
    dtype: str = "float"  # "float" (torch.randn) or "long" (torch.randint(0, high))
    high: int = 2

    def code(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        if self.dtype == "long":
            return f"torch.randint(0, {self.high}, ({dims}{',' if len(self.shape) == 1 else ''}))"
        return f"torch.randn({dims})"


@dataclass
class Spec:
    init_args: list[Any] = field(default_factory=list)  # positional, in order
    init_names: list[str] = field(default_factory=list)  # their parameter names
    init_kwargs: dict[str, Any] = field(default_factory=dict)  # keyword-only or overrides
    inputs: list[TensorSpec] = field(default_factory=list)
    template: int = -1  # index of the last fallback template used

    def key(self) -> str:
        return repr((self.init_args, sorted(self.init_kwargs.items()),
                     [(t.shape, t.dtype, t.high) for t in self.inputs]))


def guess_value(name: str) -> Any:
    """A plausible value for a required constructor parameter, from its name."""
    n = name.lower()
    if "head" in n:
        return 2
    if n in ("groups", "group"):
        return 1
    if "group" in n:
        return 2
    if "kernel" in n or n in ("k", "ks"):
        return 3
    if "stride" in n or "dilation" in n:
        return 1
    if "pad" in n:
        return 1
    if "drop" in n or "prob" in n or n in ("p", "rate") or n.endswith("_rate"):
        return 0.0
    if "eps" in n:
        return 1e-5
    if "momentum" in n:
        return 0.1
    if n in ("bias", "affine", "elementwise_affine") or n.startswith(("use_", "with_")):
        return True
    if n.startswith(("is_", "has_")) or "inplace" in n or "first" in n:
        return False
    if "class" in n:
        return 10
    if "ratio" in n:
        return 4
    if "patch" in n or "window" in n:
        return 4
    if "img" in n or "image" in n or "resolution" in n:
        return 32
    if "layers" in n or "depth" in n or "blocks" in n or n.startswith(("num_", "n_")):
        return 2 if not any(w in n for w in ("dim", "channel", "feature", "hidden")) else DIM
    if any(w in n for w in ("scale", "alpha", "beta", "gamma", "temperature", "tau")):
        return 1.0
    return DIM


def first_shape(ops: list[str]) -> TensorSpec:
    s = set(ops)
    if any(o.endswith("3d") for o in s if o.startswith(("conv", "maxpool", "avgpool",
                                                         "batchnorm", "max_pool", "avg_pool"))):
        return TensorSpec([2, DIM, 8, 8, 8])
    if any(o.endswith("2d") for o in s if o.startswith(("conv", "maxpool", "avgpool",
                                                         "batchnorm", "max_pool", "avg_pool",
                                                         "adaptive", "instancenorm"))):
        return TensorSpec([2, DIM, 16, 16])
    if any(o.endswith("1d") for o in s if o.startswith(("conv", "maxpool", "avgpool",
                                                         "max_pool", "avg_pool"))):
        return TensorSpec([2, DIM, 32])
    if any("embedding" in o for o in s) and not any(o.startswith("conv") or o == "linear"
                                                    for o in s):
        return TensorSpec([2, 8], "long", 2)
    return TensorSpec([2, 8, DIM])


TEMPLATES: tuple[tuple[int, ...], ...] = (
    (2, DIM), (2, 8, DIM), (2, DIM, 16, 16), (2, 3, 32, 32), (2, DIM, 32), (2, DIM, 8, 8, 8),
    (2, 3, 64, 64), (2, 64, 8, 8), (2, 4, DIM))


def with_template(spec: Spec, i: int) -> Spec:
    new = copy.deepcopy(spec)
    new.template = i
    for t in new.inputs:
        t.shape = list(TEMPLATES[i])
    return new


def _set_rank(t: TensorSpec, rank: int) -> None:
    if rank < len(t.shape):
        t.shape = t.shape[:rank]
    else:
        t.shape = t.shape + [16] * (rank - len(t.shape))


def _first_float(spec: Spec) -> TensorSpec | None:
    return next((t for t in spec.inputs if t.dtype == "float"), None)


def _nums(s: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", s)]


def repair(spec: Spec, error: str) -> Spec | None:
    """A changed spec that may fix `error`, or None when no rule applies."""
    new = copy.deepcopy(spec)
    if not new.inputs and "missing" not in error:
        return None
    x = new.inputs[0] if new.inputs else None
    m = re.search(r"to have (\d+) channels, but got (\d+) channels", error)
    if m and x is not None and len(x.shape) >= 2:
        x.shape[1] = int(m.group(1))
        return new
    m = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)",
                  error)
    if m:
        have, want = int(m.group(2)), int(m.group(3))
        for t in new.inputs:
            if t.dtype == "float" and t.shape and t.shape[-1] == have:
                t.shape[-1] = want
                return new
        t = _first_float(new)
        if t is not None and len(t.shape) >= 2:  # flattened features: make them 2D
            t.shape = [t.shape[0], want]
            return new
    m = re.search(r"running_mean should contain (\d+) elements", error)
    if m and x is not None and len(x.shape) >= 2:
        x.shape[1] = int(m.group(1))
        return new
    m = re.search(r"expected input with shape \[\*, ([\d, ]+)\]", error)
    if m and x is not None:
        want = _nums(m.group(1))
        if len(x.shape) <= len(want):
            x.shape = [2] + want
        else:
            x.shape = x.shape[:len(x.shape) - len(want)] + want
        return new
    m = re.search(r"\((\d+)\) doesn't match model \((\d+)\)", error)
    if m and x is not None and len(x.shape) >= 3:
        size = int(m.group(2))
        x.shape = x.shape[:2] + [size] * (len(x.shape) - 2)
        return new
    m = re.search(r"[Ee]xpected[^.]*?(\d)D", error)
    if m and x is not None and "input" in error:
        ranks = [int(r) for r in re.findall(r"(\d)D", error[m.start():m.start() + 120])]
        rank = max(r for r in ranks if r <= 5) if ranks else 0
        if rank and rank != len(x.shape):
            _set_rank(x, rank)
            return new
    m = re.search(r"not enough values to unpack \(expected (\d+), got (\d+)\)", error) or \
        re.search(r"too many values to unpack \(expected (\d+)\)", error)
    if m and x is not None:
        rank = int(m.group(1))
        if rank != len(x.shape) and 1 <= rank <= 5:
            _set_rank(x, rank)
            return new
    m = re.search(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at "
                  r"non-singleton dimension (\d+)", error)
    if m:
        a, b, k = int(m.group(1)), int(m.group(2)), int(m.group(3))
        for t in new.inputs:
            if len(t.shape) > k and t.shape[k] in (a, b):
                t.shape[k] = b if t.shape[k] == a else a
                return new
    if re.search(r"smaller than kernel|Kernel size can't be greater|Output size is too small|"
                 r"too small|should be less than|pad should be smaller|must be (?:larger|greater)"
                 r" than", error):
        grown = False
        for t in new.inputs:
            if t.dtype == "float" and len(t.shape) >= 3 and max(t.shape[2:]) < 128:
                t.shape = t.shape[:2] + [d * 2 for d in t.shape[2:]]
                grown = True
        if grown:
            return new
    if "more than 1 value per channel" in error and x is not None:
        x.shape[0] = 4
        if len(x.shape) >= 3:
            x.shape = x.shape[:2] + [max(d, 4) for d in x.shape[2:]]
        return new
    if re.search(r"'indices'|tensors used as indices must be|Expected dtype int|"
                 r"one of the following scalar types: Long", error):
        t = _first_float(new)
        if t is not None:
            t.dtype, t.high = "long", 2
            t.shape = t.shape[:2]
            return new
    if re.search(r"expected scalar type Long|Long but found Float|\"\w+\" not implemented for "
                 r"'Float'|must be Long", error):
        floats = [t for t in new.inputs if t.dtype == "float"]
        if floats:
            t = floats[-1]
            t.dtype, t.high = "long", 2
            if len(new.inputs) > 1 and t is not new.inputs[0]:
                t.shape = list(new.inputs[0].shape[:1])  # class targets: one per sample
            return new
    if re.search(r"index out of range|out of bounds", error):
        longs = [t for t in new.inputs if t.dtype == "long" and t.high > 1]
        if longs:
            longs[0].high = 1
            return new
    if re.search(r"not implemented for 'Long'|found Long|Float but found Long|"
                 r"expected scalar type Float", error):
        for t in new.inputs:
            if t.dtype == "long":
                t.dtype = "float"
                return new
    if "divisible" in error:
        for i, name in enumerate(new.init_names):
            if "head" in name.lower() and new.init_args[i] != 1:
                new.init_args[i] = 1
                return new
    m = re.search(r"forward\(\) missing (\d+) required positional argument", error)
    if m:
        base = new.inputs[0] if new.inputs else TensorSpec([2, 8, DIM])
        new.inputs += [copy.deepcopy(base) for _ in range(int(m.group(1)))]
        return new
    return None


def next_spec(spec: Spec, error: str, tried: set[str]) -> Spec | None:
    """The spec to try after `spec` failed with `error`: a repair, else the next untried
    template; None when nothing is left."""
    fixed = repair(spec, error)
    if fixed is not None and fixed.key() not in tried:
        return fixed
    if not spec.inputs:
        return None
    for i in range(spec.template + 1, len(TEMPLATES)):
        cand = with_template(spec, i)
        if cand.key() not in tried:
            return cand
    return None
