"""Per-request access to trial inputs and reference outputs, backed by the InputCache."""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
from typing import Any
from collections.abc import Callable

import torch

from kernelsmith_worker import errors, fresh_draws, value_domain
from kernelsmith_worker.aliasing import aliased_inputs
from kernelsmith_worker.inputs import (InputCache, TrialData, clone_args, device_copy,
                                       generate_inputs, host_copy, map_tensors, nbytes,
                                       poison_free_blocks, tensors_in)
from kernelsmith_worker.loader import Problem
from kernelsmith_worker.opclass import OpCounter
from kernelsmith_worker.stress import (KINDS as STRESS_KINDS, any_finite, finite,
                                       normwise_rel_error, stress_inputs)

_no_grad = torch.no_grad
_synchronize = torch.cuda.synchronize

KEEP_TRIALS = (0,)  # reused by the audit and timing: kept for the whole request
# A `spikes` draw held back from the correctness trials for the check after the timing loop
# (audit.post_timing_finding): values the candidate has never seen.
AFTER_TIMING = "spikes:after_timing"


def _seeder() -> Callable[[int, int], int]:
    """The seed get_inputs() runs under for (request seed, trial): salted with bytes drawn
    when the worker starts, so a candidate that knows the request's seed (torch.initial_seed()
    in __init__) cannot regenerate the inputs and precompute the answers. Repeatable within
    a worker (the input cache relies on it), not across workers."""
    salt = os.urandom(16)

    def seed_of(seed: int, trial: int) -> int:
        digest = hashlib.sha256(salt + f"{seed}:{trial}".encode()).digest()
        return int.from_bytes(digest[:8], "little") >> 1

    return seed_of


_input_seed = _seeder()


class ProblemError(Exception):
    """The problem itself failed (get_inputs or the reference raised): an infra_error."""

    def __init__(self, message: str, tail: str, poisoned: bool) -> None:
        super().__init__(message)
        self.message = message
        self.tail = tail
        self.poisoned = poisoned


class Trials:
    """Implements correctness.TrialSource for one request. Not thread-safe."""

    def __init__(self, problem: Problem, ref_model: torch.nn.Module, seed: int,
                 dev: torch.device, cache: InputCache, budget: int) -> None:
        self._problem = problem
        self._ref = ref_model
        self._seed = seed
        self._dev = dev
        self._cache = cache
        self._budget = budget
        self._held: dict[int, TrialData] = {}
        self._stress: dict[str, TrialData | None] = {}
        self.fresh: list[list[Any]] = []  # fresh draws for the timed slots (fresh_draws.py)
        self.fresh_finding: dict[str, Any] | None = None  # why there are none
        self.fresh_mixed = False  # a slot's tensors may come from different draws
        # what the stress values and the timed refresh keep (value_domain.py): decided in
        # prepare() from the trials' inputs, widened by the fresh draws in draw_fresh()
        self.domain: value_domain.ValueDomain | None = None
        self._observer: value_domain.Observer | None = None
        self._ref_ops: frozenset[str] = frozenset()  # aten ops the reference ran on trial 0
        self.rounding_err: float | None = None  # made in prepare() (_rounding_error)

    def _key(self, trial: int) -> tuple[str, int, int, str]:
        return (self._problem.sha256, self._seed, trial, str(self._dev))

    def _hold(self, trial: int, data: TrialData) -> None:
        for t in [t for t in self._held if t not in KEEP_TRIALS and t != trial]:
            del self._held[t]
        self._held[trial] = data

    def pristine(self, trial: int) -> TrialData:
        data = self._held.get(trial) or self._cache.get(self._key(trial))
        if data is None:
            try:
                inputs = generate_inputs(self._problem.get_inputs,
                                         _input_seed(self._seed, trial), self._dev)
            except BaseException as e:  # noqa: BLE001 - problem code may raise anything
                raise ProblemError(f"problem {self._problem.path}: get_inputs() raised "
                                   f"{errors.describe(e)}", errors.traceback_tail(e),
                                   errors.is_cuda_poison(e)) from e
            data = TrialData(inputs)
            self._cache.put(self._key(trial), data, self._budget)
        self._hold(trial, data)
        return data

    def reference(self, trial: int) -> Any:
        """A fresh device copy of trial `trial`'s reference output (the cached one is kept on
        the host, out of reach of candidate code scanning device memory): callers scrub it
        (inputs.scrub) once compared."""
        return device_copy(self._host_reference(trial), self._dev)

    def _host_reference(self, trial: int) -> Any:
        data = self.pristine(trial)
        if not data.has_reference:
            try:
                key, held = self._key(trial), nbytes(data.inputs)
                data.reference, data.finite, _, ops, data.ref_aliased = self._run_reference(
                    clone_args(data.inputs), count_ops=trial == 0,
                    per_request=lambda n: not self._cache.admits(key, held + n, self._budget))
                if trial == 0:
                    data.ops = ops
            except BaseException as e:  # noqa: BLE001
                raise ProblemError(f"problem {self._problem.path}: reference Model.forward "
                                   f"raised {errors.describe(e)}", errors.traceback_tail(e),
                                   errors.is_cuda_poison(e)) from e
            data.has_reference = True
            self._cache.put(self._key(trial), data, self._budget)
        return data.reference

    def _run_reference(self, args: list[Any],
                       per_request: bool | Callable[[int], bool] = False,
                       count_ops: bool = False
                       ) -> tuple[Any, bool, bool, frozenset[str], frozenset[int]]:
        """The reference's output for args, on the host (inputs.host_copy; per_request, or
        per_request(its bytes), for a copy that is not kept past the request: a trial the
        input cache has no room for), whether it is finite and whether any of it is (read on
        the device: on the host a large output takes seconds to scan), with count_ops the
        aten ops it ran (value_domain.RANGE_OPS), and the inputs whose memory its output
        shares (aliasing.py)."""
        counter = OpCounter(None) if count_ops else contextlib.nullcontext()
        with _no_grad(), counter:
            out = self._ref(*args)
        fin = finite(out)
        some = fin or any_finite(out)
        if self._dev.type == "cuda":
            _synchronize(self._dev)
        ops = frozenset(counter.counts) if isinstance(counter, OpCounter) else frozenset()
        if callable(per_request):
            per_request = per_request(nbytes(out))
        return host_copy(out, per_request), fin, some, ops, aliased_inputs(out, args)

    def stress(self, kind: str) -> TrialData | None:
        """Trial 0's inputs redrawn off-distribution (stress.py), kept in the problem's value
        domain (self.domain), with the reference's output (on the host: take a device_copy to
        compare, and scrub it). Where the reference is not finite everywhere on the draw
        (sqrt or log of negative values) the same draw with every value's sign made positive
        is tried too, and the first whose reference is finite everywhere is used, else the
        first with any finite value (a masked -inf output is compared where it is finite);
        None when neither has one or the reference raised on both. Drawn once per request
        and never cached across requests."""
        if kind not in self._stress:
            drawn = stress_inputs(self.pristine(0).inputs, kind.split(":")[0], self._dev,
                                  self.domain)
            chosen: TrialData | None = None
            for positive in (False, True):  # the positive copy only where it is needed
                inputs = self._positive(drawn) if positive else drawn
                got = self._stress_reference(inputs)
                if got is None:
                    continue
                out, fin, some = got
                if fin or (some and chosen is None):
                    chosen = TrialData(inputs, out, True, fin)
                if fin:
                    break
            self._stress[kind] = chosen
        return self._stress[kind]

    def after_timing(self) -> TrialData | None:
        """The held-back `spikes` draw with its reference (draw_fresh() made it before the
        candidate was imported), or None where there is none."""
        return self._stress.get(AFTER_TIMING)

    def _positive(self, inputs: list[Any]) -> list[Any]:
        """inputs with every floating point value's sign made positive, in the domain."""
        pos = list(map_tensors(inputs, lambda t: t.abs() if t.is_floating_point() else t))
        return self.domain.project_inputs(pos) if self.domain is not None else pos

    def _stress_reference(self, inputs: list[Any]) -> tuple[Any, bool, bool] | None:
        """(the reference's output on stress inputs, finite everywhere, finite anywhere), or
        None when it raised."""
        got = self._try_reference("on stress inputs", lambda: self._run_reference(
            clone_args(inputs), per_request=True))
        return None if got is None else got[:3]

    def _mix_ok(self, args: list[Any]) -> bool:
        """Whether the reference takes a mix of fresh draws (fresh_draws.mixed) as it takes
        trial 0: no exception, and finite where trial 0's output was."""
        def run() -> bool:
            with _no_grad():
                return finite(self._ref(*args)) or not self.pristine(0).finite
        return bool(self._try_reference("on a mix of fresh draws", run))

    def _try_reference(self, what: str, run: Callable[[], Any]) -> Any:
        """run() (a call of the reference), or None when it raised: the problem may refuse
        such inputs. An error that broke the device is the problem's failure (ProblemError:
        the worker is replaced)."""
        try:
            return run()
        except BaseException as e:  # noqa: BLE001 - the problem may reject such inputs
            if errors.is_cuda_poison(e):
                raise ProblemError(f"problem {self._problem.path}: reference Model.forward "
                                   f"raised {errors.describe(e)} {what}",
                                   errors.traceback_tail(e), True) from e
            return None

    def prepare(self, trials: int, mark: Callable[[str], None] = lambda name: None) -> None:
        """Inputs and reference outputs of trials 0..trials-1 and of the stress trials, made
        now: called before the candidate is imported, so nothing it installs in the process
        can touch them (as long as they fit in the input cache). `mark` books the phases
        (trials, value domain, stress)."""
        observer = value_domain.Observer(self._dev)
        for i in range(trials):
            self._host_reference(i)
            mark("trials")
            observer.add(self.pristine(i).inputs)
            mark("value_domain")
        self.rounding_err = self._rounding_error()
        mark("trials")
        self._ref_ops = self.pristine(0).ops
        self._observer, self.domain = observer, observer.domain(self._ref_ops)
        mark("value_domain")
        for kind in STRESS_KINDS:
            self.stress(kind)
            mark("stress")
        poison_free_blocks(self._dev)
        mark("poison_free_blocks")

    def _rounding_error(self) -> float | None:
        """The reference's norm-wise relative error on trial 0's float32/float64 inputs
        rounded to bfloat16, against its output on the inputs as drawn: how much of the
        output an honest low-precision computation may change (stress.timed_error_limit).
        None without such inputs, or where the reference raises or is not finite there.
        Both outputs are computed and compared on the device: copied to the host and compared
        there, a 2 GiB output took ~20 s on an H200 host."""
        args = self.pristine(0).inputs
        wide = (torch.float32, torch.float64)
        if not any(t.dtype in wide for t in tensors_in(args)):
            return None
        rounded = list(map_tensors(args, lambda t: t.to(torch.bfloat16).to(t.dtype)
                                   if t.dtype in wide else t.clone()))
        try:
            with _no_grad():
                exact = self._ref(*clone_args(args))
                out = self._ref(*rounded)
        except Exception:  # noqa: BLE001 - values the reference refuses: no figure
            return None
        err = normwise_rel_error(out, exact) if finite(exact) else math.inf
        return err if math.isfinite(err) else None

    def draw_fresh(self) -> None:
        """Fresh get_inputs() draws for the timing stage's slots (fresh_draws.py) into
        self.fresh, or why there are none into self.fresh_finding, and the held-back draw of
        the check after the timing loop (after_timing): called before the candidate is
        imported, like prepare()."""
        base = self.pristine(0).inputs
        try:
            self.fresh, self.fresh_finding = fresh_draws.draw(
                self._problem.get_inputs, base, self._dev, fresh_draws.draw_budget(self._dev))
        except BaseException as e:  # noqa: BLE001 - only what broke the device comes here
            raise ProblemError(f"problem {self._problem.path}: get_inputs() raised "
                               f"{errors.describe(e)} on a fresh draw",
                               errors.traceback_tail(e), True) from e
        if self._observer is not None and self.fresh:
            for d in self.fresh:
                self._observer.add(d)
            self.domain = self._observer.domain(self._ref_ops)
        if len(self.fresh) >= fresh_draws.MIN_DRAWS and len({id(t) for t in tensors_in(base)}) > 1:
            self.fresh_mixed = self._mix_ok(device_copy(fresh_draws.mixed(self.fresh, base),
                                                        self._dev))
        self.stress(AFTER_TIMING)
        poison_free_blocks(self._dev)  # the draws' device copies, freed, leave nothing
