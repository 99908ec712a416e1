"""Stress trials: the problem's inputs moved off the distribution its get_inputs() draws from.

Problems draw inputs with `torch.rand` (uniform in [0, 1)) or `torch.randn`, and with such
inputs many wrong kernels land within atol = rtol = 1e-2: a rank-1 "mean-field" matmul, a
softmax with the expected denominator, a loss over a sample of the elements, relu returned as
its (non-negative) input. The stress trials take trial 0's inputs and redraw every floating
point value, keeping zeros where they are (triangular, masked and padded inputs keep their
structure) and integer/bool tensors as they are (indices, lengths):

- `signed`: standard normal values (both signs, zero mean);
- `wide`: random sign times exp(1.5 * N(0, 1)): magnitudes from about 1e-3 to 1e3;
- `sparse`: standard normal values on a random sixteenth of the positions, zero elsewhere
  (tensors of at least 256 elements; smaller ones are drawn as `signed`). Any iid draw, of
  whatever distribution, lets a sum over a long axis concentrate around its mean, so a
  rank-1 "mean-field" product or an expected-value normaliser can pass every iid trial
  once K is large; with most terms zero the sums do not concentrate and such a kernel is
  off by tens of percent;
- `blocks`: trial 0's own values, made small everywhere but on 16 runs of consecutive
  elements at random places, each run 1 to 256 elements long (log-uniform) and its values
  divided by its length, every other value divided by the tensor's size (tensors of at least
  256 elements; smaller ones as they are). Every value keeps its sign and its place in the
  range the problem's draws span (towards zero), so a kernel that probes a few values to
  tell the problem's distribution from a stress draw (all inside (0, 1), say) takes it for
  the problem's own, yet most of the answer sits in 16 places of about equal weight. A
  kernel that reads a sample of the elements, blocks or rows and scales up what it read
  catches a run, or does not, by chance: a run longer than a periodic sampler's period is
  sampled in proportion, so the short runs catch element-strided samplers and the long
  ones block- and row-strided ones. Measured on 2^18-element sums and MSEs (CPU, 300-500
  draws each): a sample of every 8th element, every 8th block of 256 or a quarter of each
  2048 passes 1.6-3 % of draws, every 2nd element 8 % of the sums (what such a sample
  misses is mostly one run) and 1.7 % of the MSEs. Every value it changes is moved towards
  zero, though, so a probe of a few hundred values tells it apart by their mean magnitude
  (about 0 against torch.rand's 0.5) and takes an exact path on it alone;
- `spikes`: trial 0's own values everywhere but on 16 runs of consecutive elements at random
  places, each run 1 to 16 elements long (log-uniform, L) and its values multiplied by
  n / (16 * L), so each run sums to about a sixteenth of what the tensor summed to and
  the runs together to about as much as the rest (tensors of at least 256 elements; smaller ones as
  they are). The multiplier stops where a value would pass 2^7 (float16: the square of a
  spiked value stays finite) or 2^20 (wider types: a product of two, summed over 2^31 terms,
  stays finite), and is never below 1. Outside the runs nothing changes, so any statistic of
  a sample (range, mean, spread) is the problem's own unless the sample lands in a run: a
  256-value probe of a 2^22-element rand tensor does so in about 1 % of the draws (the runs
  cover about 90 places), yet half of a sum, and nearly all of a sum of squares, sits in the
  runs. A kernel that scales up a sample catches a run, or does not, by chance, and is off
  by a run's share or more either way. Measured on sums and MSEs of 2^18 and 2^22
  rand elements (CPU, 300 draws each): a sample of every 8th element, every 8th block of
  256 or a quarter of each 2048 passes 1.3-5.3 % of the sums' draws, every 2nd element 9 %,
  and MSEs over every 8th element or block 0.3-1 %; the subsampled MSE behind a range-and-
  mean probe (red-team r12_c03) passes 2 % at 2^22 (the draws where its probe saw a run).
  Where the problem's draws change an input's structure (value_domain.py: where a float
  tensor is zero or not finite, or a boolean or 0/1 integer tensor's values, differ between
  draws), the first STRUCTURE_RUNS runs also break it (broken()): zeros and non-finite
  values (a -inf padding) in such a float run take a random sign times the mean magnitude
  of the tensor's finite non-zero values (then scaled with the run), and such a boolean or
  0/1 run is flipped.
  Tensors of one size share their runs, so a flipped stretch of a mask lands on spiked
  values of the tensor it masks. A kernel that infers the structure from a small part of
  the input (the support of one row taken for every row's, a mask's length found by binary
  search) is exact on every draw of the problem and off by a run's share here, while a probe
  of a small part sees a run only by chance (a row of 64 in about STRUCTURE_RUNS / 64 of
  the draws). A structure every draw repeats (a triangle, a band) is kept.

They are compared norm-wise, not element by element: ||out - ref||_2 <= rtol * ||ref||_2 +
atol * sqrt(n) (the element-wise rule's own budget, spread over the tensor), so kernels in
TF32 or fp16 whose rounding is honest pass even where cancellation makes single elements
small, while approximations that only hold for the original distribution are off by tens of
percent. Where the reference's output is not finite everywhere on a draw (sqrt or log of
negative values) the draw with every sign made positive is tried too, and the first draw
whose reference is finite everywhere is used, else the first with any finite value. The
comparison then covers the reference's finite positions (a candidate that is not finite
there fails); where the reference is not finite the candidate may be anything (an honest
stable kernel is finite where a naive reference overflows on `wide` values; the timed checks
compare non-finite patterns exactly). Only a trial whose reference has no finite value at
all (or raised on both draws) is skipped, and the skipped trials are counted in the record
(`stress_skipped`): a candidate whose every stress trial was skipped gets a finding saying it
was not stress-checked.

Values the problem cannot take stay out of the draws (value_domain.py): an input kept in a
range (the reference runs an op that asserts on its values there) is folded into the range
its draws showed, and an input whose rows every draw makes non-decreasing is sorted along
its last dimension.

The draws come from a generator seeded from os.urandom, never from torch's global RNG, so
a candidate can neither predict nor replay them.
"""

from __future__ import annotations

import math
import os
import random
from typing import Any

import torch

from kernelsmith_worker.inputs import map_tensors
from kernelsmith_worker.value_domain import ValueDomain

SPARSE_DENSITY = 1.0 / 16
SPARSE_MIN_NUMEL = 256
BLOCK_RUNS = 16  # `blocks`: runs of consecutive elements that carry most of the values
BLOCK_RUN_MAX = 256  # `blocks`: the longest run
# The norm-wise budget never exceeds this share of the reference's norm: atol times the root of
# a large element count can exceed the norm itself (softmax over a wide row: a few large
# values carry it), and then any output, zeros included, would pass.
NORMWISE_CAP = 0.5
SPIKE_RUN_MAX = 16  # `spikes`: the longest run (BLOCK_RUNS runs of them, as `blocks`)
# `spikes`: a run of L values is multiplied by SPIKE_SHARE * n / L, so it sums to about
# SPIKE_SHARE of the whole tensor's sum and the runs together to about as much as the rest.
SPIKE_SHARE = 1.0 / BLOCK_RUNS
# `spikes`: the runs that also break a structure that changes between draws (zeros filled,
# booleans flipped). Few: a kernel that probes a fraction f of the input for signs of a
# broken structure (and then computes exactly) sees one with chance about STRUCTURE_RUNS * f.
STRUCTURE_RUNS = 4
# `spikes`: the largest magnitude a run's values are scaled up to. float16 (largest value
# 65504, about 2^16): 2^7, so the square of a spiked value or the product of two (2^14)
# stays finite with room for a few more such terms (a kernel that squares in half precision
# stays finite where a reference that computes in float32 is). float32, bfloat16 (the same
# exponent range: largest about 2^128) and float64: 2^20, so a product of two spiked values
# (2^40), a matmul's sum of 2^31 of them (2^71) or a fourth power (2^80) stays finite, and
# only exp-like ops overflow, as they do on `wide`. With values of order one, a run carries
# its full share (SPIKE_SHARE * n / L <= cap) in tensors of up to 2^24 * L elements
# (float16: 2^11 * L); in larger ones it carries less.
SPIKE_CAP = {torch.float16: 2.0 ** 7, torch.float32: 2.0 ** 20}
DESCRIBE = {
    "signed": "every floating point input redrawn standard normal, zeros kept",
    "wide": "every floating point input redrawn over six orders of magnitude, zeros kept",
    "sparse": "every floating point input redrawn standard normal on a sixteenth of its "
              "positions, zero elsewhere",
    "blocks": "the trial's own values, small everywhere but on 16 short runs of consecutive "
              "elements: where most of the answer is, a sample of the input does not see",
    "spikes": "the trial's own values, with 16 short runs of consecutive elements scaled up "
              "to carry half of a sum: what a sample of the input does not see",
}
KINDS: tuple[str, ...] = tuple(DESCRIBE)  # the trials, in the order they run
_randn = torch.randn
_rand = torch.rand
_Generator = torch.Generator


def runs(n: int, longest: int, rnd: random.Random,
         count: int = BLOCK_RUNS) -> list[tuple[int, int]]:
    """`count` (start, length) runs of consecutive elements of an n-element tensor (in
    logical order), 1 to `longest` long (log-uniform), at uniform places; drawn on the host
    from `rnd` (no device round trip)."""
    out = []
    for _ in range(count):
        length = min(longest, max(1, int(math.exp(rnd.random() * math.log(longest)))))
        out.append((rnd.randrange(n - length + 1), length))
    return out


def mean_magnitude(t: torch.Tensor) -> float:
    """The mean magnitude of t's finite non-zero values (1.0 where it has none): what a zero
    or a non-finite value that breaks a structure is given."""
    mags = t.abs()
    mags = torch.where(torch.isfinite(mags), mags, torch.zeros_like(mags))
    nonzero = int(torch.count_nonzero(mags))
    return float(mags.to(torch.float64).sum()) / nonzero if nonzero else 1.0


def broken(vals: torch.Tensor, typical: float, gen: torch.Generator) -> torch.Tensor:
    """A run of a tensor whose structure is data, that structure broken: booleans and 0/1
    integers flipped; float zeros and non-finite values given a random sign times `typical`
    (the tensor's mean_magnitude), the other values kept."""
    if vals.dtype == torch.bool:
        return ~vals
    if not vals.is_floating_point():
        return 1 - vals
    sign = torch.where(_rand(vals.shape, generator=gen, device=vals.device) < 0.5, -1.0, 1.0)
    return torch.where((vals == 0) | ~torch.isfinite(vals), (sign * typical).to(vals.dtype),
                       vals)


def _blocks(t: torch.Tensor, rnd: random.Random) -> torch.Tensor:
    """t's values, each of BLOCK_RUNS random runs (runs()) divided by its length, every other
    value divided by t's size; t's strides."""
    n = t.numel()
    res = torch.empty_like(t)
    if n < SPARSE_MIN_NUMEL:
        return res.copy_(t)
    scale = torch.full((n,), 1.0 / n, dtype=torch.float32, device=t.device)
    for start, length in runs(n, BLOCK_RUN_MAX, rnd):
        scale[start:start + length] = 1.0 / length
    flat = t.detach().reshape(-1)
    return res.copy_((flat * scale.to(flat.dtype)).view(t.shape))


def spike_cap(dtype: torch.dtype) -> float:
    """The largest magnitude a `spikes` run is scaled up to (SPIKE_CAP, by dtype)."""
    return SPIKE_CAP.get(dtype, SPIKE_CAP[torch.float32])


def _spikes(t: torch.Tensor, gen: torch.Generator, places: _Runs,
            structure: bool = False) -> torch.Tensor:
    """t's values, each of BLOCK_RUNS random runs (`places`, up to SPIKE_RUN_MAX long) of
    length L multiplied by SPIKE_SHARE * n / L, or less where that would take a finite value
    of t past spike_cap(t.dtype) (never by less than 1); every other value as it is; t's
    strides. Non-finite values stay what they are. `structure`: the first STRUCTURE_RUNS
    runs are broken() first."""
    n = t.numel()
    res = torch.empty_like(t)
    if n < SPARSE_MIN_NUMEL:
        return res.copy_(t)
    flat = t.detach().reshape(-1)
    wide = torch.promote_types(flat.dtype, torch.float32)
    mags = flat.abs()
    largest = float(torch.where(torch.isfinite(mags), mags, torch.zeros_like(mags)).max())
    if largest == 0.0 and not structure:
        return res.copy_(t)
    typical = mean_magnitude(flat) if structure else 0.0  # a filled zero's magnitude
    limit = max(1.0, spike_cap(t.dtype) / max(largest, typical))
    # logical order; only the runs are rewritten (where runs overlap, the later one's values)
    out = flat.clone()
    for i, (start, length) in enumerate(places.of(t)):
        factor = max(1.0, min(SPIKE_SHARE * n / length, limit))
        run = flat[start:start + length].to(wide)
        if structure and i < STRUCTURE_RUNS:
            run = broken(run, typical, gen)
        out[start:start + length] = run * factor
    return res.copy_(out.view(t.shape))


def _flipped(t: torch.Tensor, spans: list[tuple[int, int]],
             gen: torch.Generator) -> torch.Tensor:
    """A boolean or 0/1 integer tensor with its first STRUCTURE_RUNS runs broken(); t's
    strides."""
    out = t.detach().reshape(-1).clone()
    for start, length in spans[:STRUCTURE_RUNS]:
        out[start:start + length] = broken(out[start:start + length], 0.0, gen)
    return torch.empty_like(t).copy_(out.view(t.shape))


class _Runs:
    """The `spikes` runs of one draw, one set per tensor size: tensors of one size (a mask
    and the values it masks) have their runs at the same logical places."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd, self._by_size = rnd, {}

    def of(self, t: torch.Tensor) -> list[tuple[int, int]]:
        n = t.numel()
        if n not in self._by_size:
            self._by_size[n] = runs(n, SPIKE_RUN_MAX, self.rnd)
        return self._by_size[n]


def _redraw(t: torch.Tensor, kind: str, gen: torch.Generator, places: _Runs,
            structure: bool = False) -> torch.Tensor:
    if kind == "spikes" and structure and not t.is_floating_point() \
            and t.numel() >= SPARSE_MIN_NUMEL:  # value_domain marks booleans and 0/1 ints only
        return _flipped(t, places.of(t), gen)
    if not t.is_floating_point() or t.numel() == 0:
        return t.detach().clone()
    if kind == "blocks":
        return _blocks(t, places.rnd)
    if kind == "spikes":
        return _spikes(t, gen, places, structure)
    z = _randn(t.shape, generator=gen, device=t.device, dtype=torch.float32)
    keep = t != 0
    if kind == "wide":
        sign = torch.sign(_randn(t.shape, generator=gen, device=t.device, dtype=torch.float32))
        z = sign * torch.exp(1.5 * z)
    elif kind == "sparse" and t.numel() >= SPARSE_MIN_NUMEL:
        u = _rand(t.shape, generator=gen, device=t.device, dtype=torch.float32)
        keep = keep & (u < SPARSE_DENSITY)
    res = torch.empty_like(t)  # keeps the input's strides
    res.copy_(torch.where(keep, z, torch.zeros_like(z)))
    return res


def stress_inputs(inputs: list[Any], kind: str, dev: torch.device,
                  domain: ValueDomain | None = None) -> list[Any]:
    """A copy of `inputs` with every floating point value redrawn (or, for `blocks` and
    `spikes`, rescaled) as `kind` says, then moved into `domain` (value_domain.py) where one
    is given; `spikes` also breaks, in a few runs, the structure of the inputs whose
    structure the domain says changes between draws."""
    if kind not in KINDS:
        raise ValueError(f"unknown stress kind {kind!r}")
    gen = _Generator(device=dev)
    gen.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
    places = _Runs(random.Random(os.urandom(16)))
    varies = iter(domain.varies if domain is not None else ())
    drawn = list(map_tensors(inputs, lambda t: _redraw(t, kind, gen, places,
                                                       next(varies, False))))
    return domain.project_inputs(drawn) if domain is not None else drawn


def real_view(t: torch.Tensor) -> torch.Tensor:
    """A complex tensor as its real and imaginary parts ([..., 2] of the real dtype), any
    other tensor as it is: every comparison of values judges both parts alike (a float64
    conversion of a complex tensor keeps the real part only)."""
    return torch.view_as_real(t.resolve_conj()) if t.is_complex() else t


def real_views(out: Any, ref: torch.Tensor) -> tuple[Any, torch.Tensor] | None:
    """(out, ref) through real_view where ref is complex; None where ref is complex and out
    is not a complex tensor of its shape."""
    if not ref.is_complex():
        return out, ref
    if not (isinstance(out, torch.Tensor) and out.is_complex() and out.shape == ref.shape):
        return None
    return real_view(out), real_view(ref)


def finite(out: Any) -> bool:
    """True when every floating point value of the output (tensors, nested) is finite."""
    if isinstance(out, torch.Tensor):
        return not (out.is_floating_point() or out.is_complex()) \
            or bool(torch.isfinite(out).all())
    if isinstance(out, (list, tuple)):
        return all(finite(o) for o in out)
    if isinstance(out, float):
        return math.isfinite(out)
    return True


def any_finite(out: Any) -> bool:
    """True when the output has a finite value (a non-float tensor with elements counts, as
    does anything that is not a tensor or a float)."""
    if isinstance(out, torch.Tensor):
        if out.is_floating_point() or out.is_complex():
            return bool(torch.isfinite(out).any())
        return out.numel() > 0
    if isinstance(out, (list, tuple)):
        return any(any_finite(o) for o in out)
    if isinstance(out, float):
        return math.isfinite(out)
    return True


def normwise_error(out: Any, ref: Any, atol: float, rtol: float) -> tuple[bool, str]:
    """(within the norm-wise budget, what differs), over the reference's finite elements
    (the candidate must be finite there; elsewhere it is not compared). Structure, shape and
    dtype problems are the element-wise comparison's business: here they only fail with a
    short message."""
    if isinstance(ref, (list, tuple)):
        if not isinstance(out, (list, tuple)) or len(out) != len(ref):
            return False, "output structure differs from the reference"
        for k, (o, r) in enumerate(zip(out, ref, strict=True)):
            ok, why = normwise_error(o, r, atol, rtol)
            if not ok:
                return False, f"output[{k}]: {why}"
        return True, ""
    if not isinstance(ref, torch.Tensor):
        return (out == ref), f"output {out!r} != reference {ref!r}"
    if not isinstance(out, torch.Tensor) or out.shape != ref.shape:
        return False, "output shape differs from the reference"
    views = real_views(out, ref)
    if views is None:
        return False, "output is not complex where the reference is"
    out, ref = views
    if not ref.is_floating_point():
        same = bool(torch.equal(out, ref))
        return same, "" if same else "integer output differs from the reference"
    norms = _error_and_norm(out, ref)
    if norms is None:
        return False, "output has NaN/inf where the reference is finite"
    err, norm, n = norms
    budget = rtol * norm + atol * math.sqrt(max(n, 1))
    if norm > 0:  # an atol over many elements must not let a far-off output pass
        budget = min(budget, NORMWISE_CAP * norm)
    if err <= budget:
        return True, ""
    rel = err / norm if norm > 0 else math.inf
    return False, (f"relative error {rel:.3g} in the 2-norm (budget {budget / max(norm, 1e-300):.3g})")


def normwise_rel_error(out: Any, ref: Any) -> float:
    """||out - ref||_2 / ||ref||_2 over every floating point tensor of the output (the largest
    over a tuple); 0 where nothing is comparable, inf where the output is not finite."""
    if isinstance(ref, (list, tuple)) and isinstance(out, (list, tuple)):
        return max((normwise_rel_error(o, r) for o, r in zip(out, ref)), default=0.0)
    if not (isinstance(ref, torch.Tensor) and isinstance(out, torch.Tensor)) \
            or out.shape != ref.shape:
        return 0.0
    views = real_views(out, ref)
    if views is None:
        return math.inf
    out, ref = views
    if not ref.is_floating_point():
        return 0.0
    norms = _error_and_norm(out, ref)
    if norms is None:
        return math.inf
    err, norm, _ = norms
    return err / norm if norm > 0 else (0.0 if err == 0 else math.inf)


NORM_CHUNK = 1 << 24  # elements converted to float64 at once (128 MiB per temporary)


def _error_and_norm(out: torch.Tensor, ref: torch.Tensor) -> tuple[float, float, int] | None:
    """(||out - ref||_2, ||ref||_2, elements compared) in float64 over the reference's finite
    elements, or None when the output is not finite at one of them. On the tensors' own
    device, NORM_CHUNK elements at a time: a 2 GiB output converted whole to float64 takes
    three 4 GiB temporaries and, on the host, seconds."""
    o_all, r_all = out.detach().reshape(-1), ref.detach().reshape(-1)
    err2 = norm2 = 0.0
    count = 0
    for i in range(0, r_all.numel(), NORM_CHUNK):
        o = o_all[i:i + NORM_CHUNK].to(torch.float64)
        r = r_all[i:i + NORM_CHUNK].to(torch.float64)
        fin = torch.isfinite(r)
        if not bool(fin.all()):
            o, r = o[fin], r[fin]
        if not bool(torch.isfinite(o).all()):
            return None
        err2 += float(torch.linalg.vector_norm(o - r)) ** 2
        norm2 += float(torch.linalg.vector_norm(r)) ** 2
        count += r.numel()
    return math.sqrt(err2), math.sqrt(norm2), count


TIMED_ERR_FACTOR = 4.0
TIMED_ERR_FLOOR = 1e-3


def timed_error_limit(trial_err: float, rounding_err: float | None) -> float:
    """The norm-wise error a timed sample of the problem's own distribution may have: about as
    precise as the candidate was in the correctness trials (a kernel that drops to bf16 only
    while timed is not), but no looser than TIMED_ERR_FACTOR times the reference's own error
    on trial 0's inputs rounded to bfloat16 (`rounding_err`, None where not measured). The
    trials' figure is the candidate's to choose (an exact kernel scaled by 1 + 3e-3 stays
    inside the element-wise tolerance and would buy a 1.2e-2 budget for an approximation
    while timed); the rounding figure is not. Never below TIMED_ERR_FLOOR."""
    own = trial_err if rounding_err is None else min(trial_err, rounding_err)
    return max(TIMED_ERR_FACTOR * own, TIMED_ERR_FLOOR)
