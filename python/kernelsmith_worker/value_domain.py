"""The values a problem's inputs may take off its own distribution: what the stress trials and
the timed refresh must keep.

The stress trials redraw floating point inputs (signed, wide, sparse values) and the timed
refresh jitters, rescales and flips signs. Two kinds of problem cannot take every such value:

- a reference that only accepts values in a range: on a GPU, aten ops whose CUDA kernels
  assert on a float value (`binary_cross_entropy` on its input, `bernoulli` on its tensor of
  probabilities, `multinomial` on its weights) raise a device-side assert, which poisons the
  process's CUDA context, so it cannot be tried and caught. `RANGE_OPS` lists them with the
  range their CUDA kernel asserts (torch's Loss.cu, DistributionTemplates.h,
  MultinomialKernel.cu; `binary_cross_entropy_with_logits` is composed of ordinary ops and
  asserts nothing). When the reference runs one of them on trial 0, every float input whose
  values lie inside that range in every draw is folded into its own observed range
  [lo, hi] (values inside stay as they are, values outside are reflected back in).
- an input every draw makes increasing along its last dimension (non-decreasing
  everywhere, strictly between most neighbours: a cumulative distribution, sorted
  boundaries, not a 0/1 triangular mask or a constant): on unsorted rows searchsorted's
  answer depends on the probe order, so the reference cannot judge a candidate there. Such
  an input is sorted along its last dimension after the transformation.

The observer also records which inputs carry a structure that changes from draw to draw:
a float tensor whose zeros or non-finite values are elsewhere in another draw (a random
block-sparse support, a dropout mask, attention scores with a -inf padding of random
length), a boolean tensor or an integer tensor of 0s and 1s with other values (random
masks, prefix masks of random lengths, a tokenizer's attention mask). Such a structure is data the kernel must read: the `spikes` stress draw breaks it
in a few runs (stress.py). A structure every draw repeats (a triangle, a band, a fixed
causal mask) is the problem's own and is kept.

All of this is decided from what is known before the candidate is imported: the aten ops the
reference runs on trial 0 and the draws of get_inputs() (the correctness trials' inputs and
the timing stage's fresh draws). A candidate chooses neither, so a wrong list entry only
weakens the checks of problems whose reference runs that op. Other problems (`torch.rand`
inputs with no such op, say) keep the full signed, wide and sparse stress values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from collections.abc import Iterator
from typing import Any

import torch

from kernelsmith_worker.inputs import map_tensors, tensors_in

# aten op (overload packet) -> the closed range its CUDA kernel asserts its float input is in
RANGE_OPS: dict[str, tuple[float, float]] = {
    "aten.binary_cross_entropy": (0.0, 1.0),
    "aten.bernoulli": (0.0, 1.0),
    "aten.bernoulli_": (0.0, 1.0),
    "aten.multinomial": (0.0, math.inf),
}


@dataclass(frozen=True)
class TensorDomain:
    """What the transformations keep of one float input: `fold` into [lo, hi] (the range
    every draw showed), `monotone` rows (sorted along the last dimension)."""

    lo: float
    hi: float
    fold: bool
    monotone: bool

    def describe(self, index: int) -> str:
        parts = ([f"kept in [{self.lo:.4g}, {self.hi:.4g}]"] if self.fold else []) + \
            (["rows kept sorted"] if self.monotone else [])
        return f"input tensor {index}: " + ", ".join(parts)


class ValueDomain:
    """Per input tensor (in tensors_in order): its TensorDomain, or None (unrestricted)."""

    def __init__(self, tensors: Iterable[TensorDomain | None], ops: Iterable[str] = (),
                 varies: Iterable[bool] = ()) -> None:
        self.tensors = tuple(tensors)
        self.ops = sorted(ops)
        # per input tensor: whether its zeros and non-finite values (floats) or its values
        # (booleans, 0/1 integers) changed between draws (the structure is data)
        self.varies = tuple(varies) or (False,) * len(self.tensors)

    def restricts(self) -> bool:
        return any(d is not None for d in self.tensors)

    def describe(self) -> list[str]:
        return [d.describe(i) for i, d in enumerate(self.tensors) if d is not None]

    def by_id(self, base: list[Any]) -> dict[int, TensorDomain]:
        """The restricted tensors of `base` (shaped like the draws), by id()."""
        return {id(t): d for t, d in zip(tensors_in(base), self.tensors) if d is not None}

    def varying_ids(self, base: list[Any]) -> set[int]:
        """The id()s of `base`'s tensors (shaped like the draws) whose structure changes
        between draws."""
        return {id(t) for t, v in zip(tensors_in(base), self.varies) if v}

    def project_inputs(self, inputs: list[Any]) -> list[Any]:
        """inputs with every restricted tensor projected (project); the rest as they are."""
        domains = iter(self.tensors)
        return list(map_tensors(inputs, lambda t: _project_or_keep(t, next(domains, None))))


class Observer:
    """Collects, over draws of get_inputs() shaped alike, each float input's range and
    whether its rows are non-decreasing in every draw."""

    def __init__(self, dev: torch.device) -> None:
        self._dev = dev  # where the statistics are computed (host draws are copied there)
        self._lo: list[float] = []
        self._hi: list[float] = []
        self._monotone: list[bool] = []
        self._float: list[bool] = []
        self._first: list[torch.Tensor] = []  # the first draw's tensors (trial 0's)
        self._varies: list[bool] = []
        self.draws = 0
        self._unlike = False  # a draw had another number of tensors: nothing is restricted

    def add(self, inputs: list[Any]) -> None:
        ts = list(tensors_in(inputs))
        if self.draws and len(ts) != len(self._float):
            self._unlike = True
            return
        for i, t in enumerate(ts):
            lo, hi, mono, flt = _stats(t, self._dev)
            if self.draws == 0:
                self._lo.append(lo)
                self._hi.append(hi)
                self._monotone.append(mono)
                self._float.append(flt)
                self._first.append(t.detach())
                self._varies.append(False)
            else:
                self._lo[i], self._hi[i] = min(self._lo[i], lo), max(self._hi[i], hi)
                self._monotone[i] = self._monotone[i] and mono
                self._float[i] = self._float[i] and flt
                self._varies[i] = self._varies[i] or _structure_differs(self._first[i], t)
        self.draws += 1

    def domain(self, ops: Iterable[str]) -> ValueDomain:
        """The ValueDomain for a reference that ran `ops` (aten overload packet names)."""
        ops = set(ops)
        ranges = [RANGE_OPS[op] for op in ops if op in RANGE_OPS]
        out: list[TensorDomain | None] = []
        if self._unlike:
            return ValueDomain([None] * len(self._float))
        for lo, hi, mono, flt in zip(self._lo, self._hi, self._monotone, self._float,
                                     strict=True):
            fold = flt and math.isfinite(lo) and math.isfinite(hi) and any(
                a <= lo and hi <= b for a, b in ranges)
            mono = flt and mono
            out.append(TensorDomain(lo, hi, fold, mono) if fold or mono else None)
        return ValueDomain(out, ops & set(RANGE_OPS), self._varies)


STRUCTURE_CHUNK = 1 << 24  # elements compared at once (_structure_differs)


def _structure_differs(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two draws of one input differ in structure: floats where one is zero or not
    finite and the other is not, booleans anywhere, integer tensors holding only 0 and 1 (a
    mask) anywhere; other shapes or dtypes count as different, other integer tensors never
    (indices and lengths keep their values in the stress draws)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return True
    if a.is_floating_point():
        return not all(bool(((x == 0) == (y == 0)).all())
                       and bool((torch.isfinite(x) == torch.isfinite(y)).all())
                       for x, y in _chunks(a, b))
    if a.dtype != torch.bool and not all(_zero_one(x) and _zero_one(y)
                                         for x, y in _chunks(a, b)):
        return False
    return not all(bool((x == y).all()) for x, y in _chunks(a, b))


def _chunks(a: torch.Tensor, b: torch.Tensor) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """a's and b's elements STRUCTURE_CHUNK at a time, b's moved to a's device a chunk at a
    time."""
    fa, fb = a.reshape(-1), b.detach().reshape(-1)
    for i in range(0, fa.numel(), STRUCTURE_CHUNK):
        yield fa[i:i + STRUCTURE_CHUNK], fb[i:i + STRUCTURE_CHUNK].to(fa.device)


def _zero_one(t: torch.Tensor) -> bool:
    return bool(((t == 0) | (t == 1)).all())


def _stats(t: torch.Tensor, dev: torch.device) -> tuple[float, float, bool, bool]:
    """(min, max, rows increasing, a non-empty float tensor) of one drawn tensor; rows are
    increasing when they never decrease and most neighbours strictly increase."""
    if not t.is_floating_point() or t.numel() == 0:
        return math.inf, -math.inf, False, False
    v = t.detach().to(dev)
    lo, hi = (float(x) for x in torch.aminmax(v))
    return lo, hi, _increasing_rows(v), True


def _increasing_rows(v: torch.Tensor) -> bool:
    if v.dim() == 0 or v.shape[-1] < 2:
        return False
    first = v.reshape(-1, v.shape[-1])[0]  # most inputs fail here, without a pass over all
    if not bool((first[1:] >= first[:-1]).all()):
        return False
    step = v[..., 1:] - v[..., :-1]
    return bool((step >= 0).all()) and 2 * int(torch.count_nonzero(step > 0)) > step.numel()


def _project_or_keep(t: torch.Tensor, d: TensorDomain | None) -> torch.Tensor:
    if d is not None and t.is_floating_point():
        project(t, d)
    return t


def project(t: torch.Tensor, d: TensorDomain | None) -> None:
    """Moves t's values (in place) into the domain: reflected into [lo, hi] where `fold` (a
    value inside stays as it is), then sorted along the last dimension where `monotone`. A
    leading batch dimension (the timed slots' pool) changes nothing: both act per element
    and per row."""
    if d is None:
        return
    if d.fold:
        width = d.hi - d.lo
        if width <= 0:
            t.fill_(d.lo)
        else:
            # the triangle wave of period 2 * width through (lo, lo) and (hi, hi)
            off = torch.remainder(t - d.lo, 2 * width)
            t.copy_(d.hi - (off - width).abs())
    if d.monotone and t.dim() >= 1:
        t.copy_(torch.sort(t, dim=-1).values)
