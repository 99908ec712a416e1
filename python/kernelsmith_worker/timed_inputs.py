"""The inputs the timing stage feeds both models (timing_policy.TimedInputs).

A sample is k back-to-back calls (one CUDA graph replay). If all k read the same tensor, a
candidate can compute once and serve the rest from a memo keyed on a few input values (on
the device, invisible to the host); if samples repeat values, the memo serves whole samples.
So the evaluator owns R = min(k, memory budget / input bytes) input slots (the timing stage
puts no more than R calls in a sample), call j reads slot j, and before every sample each
slot takes a base: one of D fresh draws of get_inputs() (fresh_draws.py), picked per slot
and per refresh from the OS's entropy, or trial 0's values where fewer than two draws could
be made. So zeros, infinities, masks, offsets and integer values change between samples as
the problem's own distribution lets them (a memo keyed on them would have to hold D
patterns; docs/evaluation.md). Where the problem allows it, each of a slot's tensors takes
its base from its own draw, so no tensor names the draw another came from (fresh_draws.py).
On top, each chunk of 64 elements of a floating point tensor (fewer where its size asks)
takes, at random, its own position's values in the base or in a second draw picked for the
slot (from the OS's entropy), where both chunks are all non-zero and finite; the base's
zeros and non-finite values (masks, padding, a triangle) stay where they are. Wherever positions are independent this is a draw of the problem's own
distribution: no statistic of the values tells a timed call from a trial, an audit call or a
check (a refresh that only shrank magnitudes was told apart by the mean of |x|), the values
stay inside any domain that holds the draws', and every refresh has a pattern no earlier one
had, so a memo keyed on a few input values, or on a whole row, misses. Where there is only
one draw (trial 0's values), floats are the base's values times a fresh random scale in
[0.5, 1) (one per slot) times a fresh per-element factor in [0.75, 1), drawn on the device
from a generator seeded from os.urandom. Cost: a few memory-bound passes over the slots per
sample, outside the timed region. Integer tensors of two or more dimensions, and unsorted
1-D ones that repeat a value (labels, ids), take every element from the base's own values
at random positions (token ids, targets with an ignore index keep only values the problem
produced; a new multiset every refresh, so a histogram cannot be remembered); unsorted 1-D
integer tensors of distinct values (a permutation) are the base's values in a fresh random
order; sorted ones (offsets) and booleans (masks) are the base's values. Each slot is its
own allocation, placed in random order with random gaps: a call's input does not locate the
others (no batching of a whole sample in its first call). Where the draws change an input's
structure (value_domain.py: a float tensor's zeros, a boolean tensor's values), every
refresh also breaks it in a few short runs per slot (a mask's values flipped, zeros given
the input's mean magnitude), shared by a slot's tensors of one size: a kernel that infers
the structure from a part of its input is off on the timed checks. A structure every draw
repeats (a triangle) is kept. An input the problem hands over with other
strides (a transposed view, the layout a projection leaves) keeps them, size-1 dimensions
included, wherever they describe dense memory; an overlapping one (an expanded tensor) is
timed contiguous.

`refresh(signed=True)` also gives every element a random sign, like the `signed` stress
trial. The timing stage times both models on such values too: a kernel that probes its
input and takes an approximation only when the values look like get_inputs()' distribution
(all in [0, 1), say) runs its exact path there, and when the candidate slows down on signed
values much more than the reference does, the signed figure is the one reported.

A timed check's reference is computed on private copies of the values the last refresh
wrote. A non-finite reference never skips a check: the candidate must have the same NaN and
infinities at the same places (a -inf masked row, a signed sample through log or sqrt) and
agree on the rest. Non-finite values in the copies of an input whose draws were all finite,
and fresh draws whose device copy no longer holds what was drawn, are tampering
(`tampered()`).
"""

from __future__ import annotations

import collections
import contextlib
import math
import os
import random
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import torch

from kernelsmith_worker import fresh_draws, stress, value_domain
from kernelsmith_worker.correctness import bitwise_equal
from kernelsmith_worker.inputs import (alias as _alias, free_memory_budget, map_tensors, nbytes,
                                      tensors_in, unversioned as _unversioned)
from kernelsmith_worker.stress import finite

_rand = torch.rand
JITTER = 0.25  # per-element factor in [0.75, 1): no two refreshes share a value pattern
CHECK_CHUNK = 256 << 20  # bytes of slots gathered at once to compare them with the pool
SPACER_MAX = 64 << 20  # bytes of a spacer before a timed check's copy of one input
HELD_SHARE = 2  # timed checks' copies are held until they take budget / HELD_SHARE bytes


def pool_budget(dev: torch.device) -> int:
    """Bytes the slots may take: $KS_TIMED_INPUT_BYTES, else 1/8 of the GPU's free memory up
    to 4 GiB, else 256 MiB on the CPU."""
    return free_memory_budget(dev, "KS_TIMED_INPUT_BYTES", 8, 4 << 30, 256 << 20)


class RotatingInputs:
    """TimedInputs over `base` (trial 0's pristine inputs, never written)."""

    checked = True

    def __init__(self, base: list[Any], dev: torch.device, budget: int,
                 agree: Callable[[object, object], bool],
                 consistent: Callable[[object, object], bool] | None = None,
                 draws: list[list[Any]] | None = None, mixed: bool = False,
                 domain: value_domain.ValueDomain | None = None) -> None:
        """`agree(cand, ref)`: the timed check on every checked sample; `consistent(cand,
        ref)`: also required on samples of the problem's own distribution (not the signed
        ones), e.g. no less precise than the candidate was in the correctness trials;
        `draws`: fresh get_inputs() draws shaped like `base` (fresh_draws.draw) the slots'
        bases are picked from, or None (trial 0's values are every slot's base); `mixed`:
        each tensor of a slot takes its base from its own draw (fresh_draws.py), else all of a
        slot's tensors from one; `domain`: what the refreshed values keep (value_domain.py:
        a range, sorted rows), or None."""
        self._base = base
        self._domains = domain.by_id(base) if domain is not None else {}
        # inputs whose structure (a float tensor's zeros, a boolean tensor's values) changes
        # between draws: every refresh breaks it in a few runs (_break_structure)
        self._varies = domain.varying_ids(base) if domain is not None else set()
        self._typical: dict[int, float] = {}  # per such float input: mean |non-zero value|
        # per base tensor: the draws as drawn (host memory; one of them is compared with its
        # device copy at every tampered(), so a candidate that rewrites the bases to choose
        # the timed inputs, ids that slow the reference say, is found), and its values in
        # every draw ([D, ...] on dev), or trial 0's ([1, ...])
        self._host = fresh_draws.per_input(draws, base) if draws else {}
        self._stacks = {key: torch.stack(vals).to(dev) for key, vals in self._host.items()} \
            if draws else {id(t): t.unsqueeze(0) for t in tensors_in(base)}
        # float inputs whose every draw is finite: a non-finite value in their slots or in the
        # timed check's copies was written by someone else
        self._finite_inputs = {key for key, st in self._stacks.items()
                               if st.is_floating_point() and bool(torch.isfinite(st).all())}
        self.draws = len(draws) if draws else 0
        self._chunks: dict[int, tuple[int, torch.Tensor]] = {}  # _plain_chunks, per input
        self.mixed = mixed and self.draws > 1
        self._pick = random.SystemRandom()
        self._dev = dev
        self._budget = budget
        self._agree = agree
        self._consistent = consistent
        self._signed = False  # how the last refresh drew its values
        self._gen = torch.Generator(device=dev)
        self._gen.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        self.slots = 0
        # per base tensor: (base, scratch pool [R, ...], the R slot tensors, how refreshed)
        self._pools: list[tuple[torch.Tensor, torch.Tensor, list[torch.Tensor], str]] = []
        self._args: list[list[Any]] = []  # the candidate's tensor objects, per slot
        self._ref_args: list[list[Any]] = []  # the reference's own objects over the same memory
        self._check_rows: dict[int, torch.Tensor] | None = None  # while a check's reference runs
        self._check_spacers: list[torch.Tensor] = []  # while a check runs (_copies)
        # earlier checks' copies, held so that the allocator cannot hand their memory to a
        # later check's copies (oldest first, with their bytes)
        self._held: collections.deque[tuple[torch.Tensor, int]] = collections.deque()
        self._held_bytes = 0
        # the candidate's slot objects (weakly: held here, a call's objects would show one
        # reference more than another call's), each with its layout
        self._layout: list[tuple[weakref.ref[torch.Tensor], tuple]] = []
        self._spacers: list[torch.Tensor] = []

    def use(self, k: int) -> int:
        per = max(nbytes(self._base), 1)
        want = max(1, min(k, self._budget // (2 * per)))  # slots + the scratch pool
        if want == self.slots:
            return want
        self._pools, self._args, self._ref_args, self._spacers = [], [], [], []
        self._layout = []
        self.slots = want
        slots: dict[int, list[torch.Tensor]] = {}
        rnd = random.Random(os.urandom(16))
        for t in tensors_in(self._base):
            pool = torch.empty((want,) + tuple(t.shape), dtype=t.dtype, device=t.device)
            pool.copy_(t.unsqueeze(0).expand_as(pool))
            # each slot its own allocation, in random order with random gaps between them:
            # a call's input says nothing about where the other calls' inputs are
            own: list[torch.Tensor | None] = [None] * want
            for j in rnd.sample(range(want), want):
                own[j] = _laid_out_like(t, pool[j])
                self._spacers.append(torch.empty(rnd.randrange(1, 1 << 16), dtype=torch.uint8,
                                                 device=t.device))
            slots[id(t)] = [x for x in own if x is not None]
            kind = _refresh_kind(t)
            self._pools.append((t, pool, slots[id(t)], kind))
            self._made_once(t, kind)
        for j in range(want):
            self._ref_args.append(list(map_tensors(self._base,
                                                   lambda t, j=j: slots[id(t)][j])))
        self._fresh_args()
        return want

    def _made_once(self, t: torch.Tensor, kind: str) -> None:
        """What every refresh of t reads and is made once (its chunks' plainness, its mean
        magnitude), made here rather than on a refresh: every refresh then launches the same
        kernels, which the launch accounting records once and subtracts per sample."""
        key = id(t)
        if kind == "float" and self.draws >= 2 and key not in self._chunks:
            self._chunks[key] = _plain_chunks(self._stacks[key])
        if key in self._varies and t.is_floating_point() and key not in self._typical:
            self._typical[key] = stress.mean_magnitude(self._stacks[key])

    def _fresh_args(self) -> None:
        """The candidate's tensor objects over the slots' memory, new ones at every refresh:
        other objects than the reference's, so re-seating its own (set_, resize_,
        as_strided_) cannot change what the reference reads, and other objects than the
        last sample's, so a candidate that recognises an object it was handed before cannot
        tell a timed call by it (checks and trials hand it new objects too)."""
        self._args = [list(map_tensors(ref, _alias)) for ref in self._ref_args]
        self._layout = [(weakref.ref(t), _layout_of(t)) for args in self._args
                        for t in tensors_in(args)]

    def args(self, j: int) -> list[Any]:
        """The arguments call j of a sample of the candidate reads; while a timed check runs,
        fresh copies of the values the last refresh wrote (the candidate called again on
        them, outside the timing, must give what its timed call gave)."""
        if not self.slots:
            self.use(1)
        if self._check_rows is not None:
            return self._copies(j)
        return self._args[j % self.slots]

    def last_slot(self) -> list[Any]:
        """Slot 0's own tensors, for the call after the timing loop, the candidate's objects
        over the slots dropped: the runner hands the candidate new ones (inputs.present), as
        at every other call, so that call's objects are neither ones it was handed before nor
        held twice."""
        if not self.slots:
            self.use(1)
        self._args, self._layout = [], []
        return self._ref_args[0]

    def ref_args(self, j: int) -> list[Any]:
        """The arguments call j of the reference reads: its own tensor objects over the slot's
        memory, or, while a timed check's reference runs, private copies of the values the
        last refresh wrote (whatever the candidate did to its slots)."""
        if not self.slots:
            self.use(1)
        if self._check_rows is not None:
            return self._copies(j)
        return self._ref_args[j % self.slots]

    def _copies(self, j: int) -> list[Any]:
        """Slot j's refreshed values, copied on demand (one slot's worth at a time), each
        after a spacer of random size and held after its check (_hold): a copy's address
        does not repeat from check to check (a candidate counting the addresses it has seen
        would take them for timed slots)."""
        rows = self._check_rows or {}

        def copy(t: torch.Tensor) -> torch.Tensor:
            n = max(t.numel() * t.element_size(), 512)  # the copy's own size class,
            hi = min(2 * n, SPACER_MAX)  # within a bound on what a check holds besides
            self._check_spacers.append(torch.empty(self._pick.randrange(min(n // 2, hi // 2), hi),
                                                   dtype=torch.uint8, device=t.device))
            return _alias(self._hold(_laid_out_like(t, rows[id(t)][j % self.slots])))
        return list(map_tensors(self._base, copy))

    def _hold(self, t: torch.Tensor) -> torch.Tensor:
        """t, held past its check while the held copies take at most budget / HELD_SHARE
        bytes: freed, its memory would be the next copy's (a large block of the caching
        allocator, the host's mmap threshold), and a candidate that counts the input
        addresses it has seen would take the copies for timed slots."""
        n = t.numel() * t.element_size()
        self._held.append((t, n))
        self._held_bytes += n
        while self._held_bytes > self._budget // HELD_SHARE and len(self._held) > 1:
            self._held_bytes -= self._held.popleft()[1]
        return t

    @contextlib.contextmanager
    def pristine(self) -> Iterator[None]:
        """Within: ref_args() and args() hand out copies of the values the last refresh wrote
        (the scratch pool's rows, which no candidate call reads), so a candidate that writes
        into its input (NaN into one element, say) cannot make the check's reference
        non-finite and so uncheckable."""
        self._check_rows = {id(base): pool for base, pool, _, _ in self._pools}
        try:
            yield
        finally:
            self._check_rows = None
            self._check_spacers.clear()

    def tampered(self) -> str | None:
        """What the candidate did to its timed inputs, or None: a slot re-seated or
        re-strided (its layout changed), or its values written (they differ from what the
        last refresh wrote)."""
        for ref, layout in self._layout:
            t = ref()
            if t is not None and _layout_of(t) != layout:
                return "a timed input tensor was re-seated or re-strided in place"
        if self.draws:
            d = self._pick.randrange(self.draws)
            for key, drawn in self._host.items():
                if not bitwise_equal(self._stacks[key][d], drawn[d].to(self._dev)):
                    return ("the evaluator's fresh draws the timed inputs are made from were "
                            "written by the candidate")
        for base, pool, slots, _ in self._pools:  # a fixed tensor's pool rows are its values
            if id(base) in self._finite_inputs and not bool(torch.isfinite(pool).all()):
                return ("the evaluator's copy of a timed input holds non-finite values that "
                        "no draw had: its memory was written by the candidate")
            if not _slots_equal(slots, pool):  # bytes: a NaN input equals itself
                return "a timed input's values were written by the candidate"
        return None

    def refresh(self, signed: bool = False) -> None:
        self._signed = signed
        if not self.slots:
            return
        self._fresh_args()
        scale = _rand(self.slots, generator=self._gen, device=self._dev, dtype=torch.float32)
        scale = scale * 0.5 + 0.5
        pick = self._picks()
        runs = self._slot_runs()
        for base, pool, slots, kind in self._pools:
            stack = self._stacks[id(base)]
            if self.mixed:
                pick = self._picks()
            rows, bases = list(pool.unbind(0)), [stack[i] for i in pick]
            if kind == "float" and self.draws >= 2:
                # chunks of the base whose elements are all non-zero and finite take, at
                # random, the same chunk of a second draw picked for the slot where that one
                # is plain too; zeros and non-finite values (masks, padding, a triangle)
                # stay where they are. A value of the problem's own distribution wherever
                # positions are independent, so nothing in the values tells a timed call
                # from a trial, and a pattern no earlier refresh had. In a signed sample each
                # element's sign is also drawn at random.
                self._mix(base, stack, pool, pick)
                if signed:
                    _random_signs(pool, self._gen)
                value_domain.project(pool, self._domains.get(id(base)))
            elif kind == "float":
                # one draw only (trial 0's values): pool = base * scale_j * f, f uniform in
                # [1 - JITTER, 1), signs at random in a signed sample
                pool.uniform_(1 - JITTER, 1, generator=self._gen)
                if signed:
                    _random_signs(pool, self._gen)
                pool.mul_(scale.view((self.slots,) + (1,) * base.dim()).to(pool.dtype))
                torch._foreach_mul_(rows, bases)
                value_domain.project(pool, self._domains.get(id(base)))
            elif kind == "int":
                # each element: the value at a random position of its slot's base
                flat, n = pool.view(self.slots, -1), base.numel()
                at = torch.randint(0, n, flat.shape, generator=self._gen, device=self._dev)
                flat.copy_(torch.stack(bases).view(self.slots, -1).gather(1, at))
                del at
            elif kind == "perm":
                # each slot: its base's values in a fresh random order (same multiset and sum)
                torch._foreach_copy_(rows, bases)
                keys = torch.rand(pool.shape, generator=self._gen, device=self._dev)
                pool.copy_(pool.gather(1, keys.argsort(dim=1)))
                del keys
            elif self.draws:  # fixed: the base's values as they are
                torch._foreach_copy_(rows, bases)
            else:
                continue
            if id(base) in self._varies:
                self._break_structure(base, pool, runs)
            torch._foreach_copy_(slots, rows)

    def _slot_runs(self) -> list[dict[int, list[tuple[int, int]]]]:
        """Per slot, the runs of each tensor size that break a structure (_break_structure):
        stress.STRUCTURE_RUNS runs (stress.runs), at places from the OS's entropy, shared by a
        slot's tensors of one size (a mask and the values it masks)."""
        out: list[dict[int, list[tuple[int, int]]]] = [{} for _ in range(self.slots)]
        for base, *_ in self._pools:
            n = base.numel()
            if id(base) not in self._varies or n < stress.SPARSE_MIN_NUMEL:
                continue
            for by_size in out:
                if n not in by_size:
                    by_size[n] = stress.runs(n, stress.SPIKE_RUN_MAX, self._pick,
                                             stress.STRUCTURE_RUNS)
        return out

    def _break_structure(self, base: torch.Tensor, pool: torch.Tensor,
                         runs: list[dict[int, list[tuple[int, int]]]]) -> None:
        """In each slot's row of `pool`, the slot's runs for base's size broken
        (stress.broken: booleans and 0/1 integers flipped, a float input's zeros and
        non-finite values given its mean magnitude over the draws with a random sign). A
        kernel that infers such a structure from a part of its input (one row's support for
        every row's, a mask's or a -inf padding's length by binary search) is off on the
        timed checks wherever a run lands outside that part."""
        n = base.numel()
        if n < stress.SPARSE_MIN_NUMEL:
            return
        slots, cols = [], []
        for j, by_size in enumerate(runs):
            for start, length in by_size.get(n, []):
                slots += [j] * length
                cols += range(start, start + length)
        if not cols:
            return
        at = (torch.tensor(slots, device=self._dev), torch.tensor(cols, device=self._dev))
        flat = pool.view(self.slots, n)
        flat[at] = stress.broken(flat[at], self._typical.get(id(base), 0.0), self._gen)
        value_domain.project(pool, self._domains.get(id(base)))

    def _mix(self, base: torch.Tensor, stack: torch.Tensor, pool: torch.Tensor,
             pick: list[int]) -> None:
        """pool[j] = draw pick[j], each chunk of C elements (C = 64 where the size allows)
        replaced with a coin's chance by the same chunk of another draw, where both chunks
        are plain (_plain_chunks): one gather of whole chunks, a coin per chunk, no pass per
        element beyond the copy."""
        size, ok = self._chunks[id(base)]
        rows = stack.shape[0]
        n = ok.shape[1]
        first = torch.tensor(pick, device=self._dev)
        second = torch.tensor([(i + self._pick.randrange(1, rows)) % rows for i in pick],
                              device=self._dev)  # another draw than the base's
        coin = torch.rand((len(pick), n), generator=self._gen, device=self._dev) < 0.5
        coin &= ok[first] & ok[second]
        src = torch.where(coin, second[:, None], first[:, None]) * n
        src += torch.arange(n, device=self._dev)
        torch.index_select(stack.reshape(rows * n, size), 0, src.view(-1),
                           out=pool.view(len(pick) * n, size))

    def _picks(self) -> list[int]:
        """Per slot, the draw its base comes from (from the OS's entropy)."""
        return [self._pick.randrange(max(self.draws, 1)) for _ in range(self.slots)]

    def reproduced(self, timed: object, again: object, rerun: Callable[[], object]) -> bool:
        """Whether `again`, the candidate called outside the timing on the values its timed
        call read, is what the timed call returned: within rounding-order noise
        (self_gap <= 1), or within three times the candidate's own run-to-run difference
        (`rerun()`: one more call on the same values) where it is not deterministic, up to
        REPRODUCE_MAX: a candidate that jitters its own output on purpose must not widen the
        check until a timed call that computes less fits inside it."""
        gap = self_gap(timed, again)
        return gap <= 1.0 or gap <= min(3.0 * self_gap(rerun(), again), REPRODUCE_MAX)

    def agree(self, cand_out: object, ref_out: object) -> bool:
        """The comparison. Where the reference's output is not finite (a signed sample
        through log or sqrt, say) the candidate must have the same non-finite values at the
        same places and agree on the rest."""
        if not finite(ref_out):
            return _agree_where_finite(cand_out, ref_out, self._agree)
        if not self._agree(cand_out, ref_out):
            return False
        return self._signed or self._consistent is None or self._consistent(cand_out, ref_out)


SELF_REL = 1e-4  # a call and its repeat on the same values: norm-wise, float32 outputs
# The most a timed output may differ from a repeat, in self_gap's units, however much the
# candidate differs from itself: run-to-run differences of atomics are a few hundredths of a
# unit (float32), a few units at most in half precision.
REPRODUCE_MAX = 10.0


def self_gap(a: object, b: object) -> float:
    """How far output a is from output b, in units of what rounding order may change: per
    floating point tensor ||a - b||_2 / (rel * ||b||_2 + tiny), rel = max(SELF_REL,
    4 x the dtype's epsilon), the same non-finite values at the same places; other tensors
    and values exactly equal (else inf). The largest over the outputs."""
    if isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or len(a) != len(b):
            return math.inf
        return max((self_gap(x, y) for x, y in zip(a, b, strict=True)), default=0.0)
    if not isinstance(b, torch.Tensor):
        return 0.0 if a == b else math.inf
    if not isinstance(a, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
        return math.inf
    a, b = stress.real_view(a), stress.real_view(b)
    if not b.is_floating_point():
        return 0.0 if torch.equal(a, b) else math.inf
    fa, fb = torch.isfinite(a), torch.isfinite(b)
    if not torch.equal(fa, fb) or not torch.equal(a[~fb].nan_to_num(), b[~fb].nan_to_num()):
        return math.inf
    x, y = a[fb].double(), b[fb].double()
    rel = max(SELF_REL, 4 * torch.finfo(b.dtype).eps)
    return float(torch.linalg.vector_norm(x - y) /
                 (rel * torch.linalg.vector_norm(y) + 1e-30 + 1e-12 * math.sqrt(y.numel())))


def _slots_equal(slots: list[torch.Tensor], pool: torch.Tensor) -> bool:
    """Every slot holds its pool row's bytes (values in logical order, whatever the slot's
    strides). The slots are gathered into contiguous chunks of about CHECK_CHUNK bytes and
    compared chunk by chunk: one comparison a chunk, not one a slot (a sample of a tiny
    kernel reads up to a thousand slots)."""
    per = max(pool[0].numel() * pool.element_size(), 1) if len(pool) else 1
    step = max(1, CHECK_CHUNK // per)
    return all(bitwise_equal(torch.stack(slots[i:i + step]), pool[i:i + step])
               for i in range(0, len(slots), step))


def _agree_where_finite(cand: object, ref: object,
                        agree: Callable[[object, object], bool]) -> bool:
    """cand against a reference with non-finite values: the same NaN and infinities at the
    same places (a garbage output cannot hide behind them), `agree` on the finite rest."""
    if isinstance(ref, (list, tuple)):
        return isinstance(cand, (list, tuple)) and len(cand) == len(ref) and all(
            _agree_where_finite(c, r, agree) for c, r in zip(cand, ref, strict=True))
    if not isinstance(ref, torch.Tensor) or not (ref.is_floating_point() or ref.is_complex()):
        return agree(cand, ref)
    if not isinstance(cand, torch.Tensor) or cand.shape != ref.shape or cand.dtype != ref.dtype:
        return False
    cand, ref = stress.real_view(cand), stress.real_view(ref)
    nan, inf = torch.isnan(ref), torch.isinf(ref)
    if not torch.equal(torch.isnan(cand), nan) or not torch.equal(cand[inf], ref[inf]):
        return False
    ok = ~(nan | inf)
    return not bool(ok.any()) or agree(cand[ok], ref[ok])


def _laid_out_like(t: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """A new tensor holding `values` with t's strides where they describe dense memory (the
    kernel sees the layout the problem declares), else contiguous."""
    if _dense(t):
        out = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device)
        return _unversioned(out.copy_(values))
    return values.clone()


def _dense(t: torch.Tensor) -> bool:
    """t's elements fill one block of memory without overlap (any order of dimensions; the
    strides of size-1 dimensions do not matter)."""
    dims = sorted(((st, n) for n, st in zip(t.shape, t.stride()) if n != 1))
    expect = 1
    for st, n in dims:
        if st != expect:
            return False
        expect *= n
    return True


def _random_signs(pool: torch.Tensor, gen: torch.Generator) -> None:
    """Multiplies every element of `pool` by +1 or -1, drawn at random."""
    sign = torch.empty_like(pool).bernoulli_(0.5, generator=gen)
    pool.mul_(sign.mul_(2).sub_(1))


def _layout_of(t: torch.Tensor) -> tuple:
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.storage_offset(), t.dtype)


def _plain_chunks(stack: torch.Tensor) -> tuple[int, torch.Tensor]:
    """(C, ok[D, n / C]): the chunk size (64, 16, 4 or 1 elements, the largest that divides
    the input's size) and, per draw of `stack` [D, ...], which chunks hold only non-zero
    finite values (TimedInputs._mix)."""
    numel = stack[0].numel()
    size = next(c for c in (64, 16, 4, 1) if numel % c == 0)
    v = stack.reshape(stack.shape[0], numel // size, size)
    return size, ((v != 0) & torch.isfinite(v)).all(dim=2)


def _refresh_kind(t: torch.Tensor) -> str:
    """float: mixed chunk by chunk with a second draw (rescaled and jittered where there is
    only one);
    int: integer tensors of two or more dimensions (token ids, targets), and 1-D ones that
    are not sorted and repeat a value (labels, ids), resampled from their base's own values:
    a new multiset every refresh, so an answer that depends only on the multiset (a
    histogram) cannot be remembered; perm: unsorted 1-D integer tensors of distinct values
    (a permutation, indices that must not collide) in a fresh random order; fixed: the rest
    (sorted 1-D integer tensors such as offsets, booleans such as masks) keep their base's
    values."""
    if t.is_floating_point():
        return "float"
    if t.dtype == torch.bool or t.is_complex() or t.numel() <= 1:
        return "fixed"
    if t.dim() >= 2:
        return "int"
    if t.dim() == 1 and not bool((t[1:] >= t[:-1]).all()):
        return "perm" if int(torch.unique(t).numel()) == t.numel() else "int"
    return "fixed"
