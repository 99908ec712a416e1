"""Correctness: comparing a candidate's outputs with the reference's, trial by trial.

Per trial i (inputs from seed + i): freed memory is poisoned, the candidate runs first on a
clone of the pristine inputs, its inputs are checked bit for bit, then the reference output
(cached, or computed now on its own clone) is compared: plain dense Tensor, same
shape/dtype/device, values within `atol + rtol * |ref|` computed in float (NaN matches only
NaN). Tuples/lists of outputs are compared element by element.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from collections.abc import Callable

import torch

from kernelsmith_worker import errors
from kernelsmith_worker.aliasing import aliased_inputs
from kernelsmith_worker.findings import Hacked
from kernelsmith_worker.inputs import TrialData, clone_args, device_copy, scrub, tensors_in
from kernelsmith_worker.event_watch import EventWatch
from kernelsmith_worker.launches import active_recorder
from kernelsmith_worker.opclass import OpCounter
from kernelsmith_worker.stress import (DESCRIBE as STRESS_TEXT, KINDS as STRESS_KINDS,
                                      normwise_error, normwise_rel_error)

_isclose = torch.isclose
_equal = torch.equal
_perf_counter = time.perf_counter
_CHUNK = 1 << 24  # elements compared at once (bounds the temporary memory)
_FOLLOW_SAMPLES = 1 << 20  # elements sampled by the follows-the-reference check
WEAK_FOLLOW = 0.5  # correlation below which a near-constant output does not follow the inputs


@dataclass(frozen=True)
class Tolerance:
    name: str
    atol: float
    rtol: float


TOLERANCES: dict[str, Tolerance] = {
    "default": Tolerance("default", 1e-2, 1e-2),
    "strict": Tolerance("strict", 1e-4, 1e-4),
}


@dataclass
class Comparison:
    ok: bool
    message: str = ""  # why not ok (without the trial prefix)
    check: str = ""  # the check that failed
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    mismatches: int = 0
    nonfinite_mismatches: int = 0  # NaN/inf where the reference differs
    index: list[int] | None = None
    expected: Any = None
    actual: Any = None
    atol_used: float | None = None  # set when atol was scaled to the output's magnitude


def _fmt(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, float) else str(x)


def _wide_dtype(dtype: torch.dtype) -> torch.dtype:
    if dtype.is_complex:
        return torch.complex128
    if dtype in (torch.float64, torch.int64, torch.uint64, torch.int32, torch.uint32):
        return torch.float64
    return torch.float32


def _unravel(flat: int, shape: tuple[int, ...]) -> list[int]:
    index: list[int] = []
    for dim in reversed(shape):
        index.append(flat % dim if dim else 0)
        flat = flat // dim if dim else 0
    return list(reversed(index))


def _compare_values(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance) -> Comparison:
    wide = _wide_dtype(ref.dtype)
    o, r = out.reshape(-1), ref.reshape(-1)
    res = Comparison(ok=True)
    for start in range(0, r.numel(), _CHUNK):
        oc = o[start: start + _CHUNK].to(wide)
        rc = r[start: start + _CHUNK].to(wide)
        close = _isclose(oc, rc, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
        diff = torch.nan_to_num((oc - rc).abs(), nan=0.0, posinf=0.0)  # NaN/inf counted below
        if diff.numel():
            res.max_abs_err = max(res.max_abs_err, float(diff.max().item()))
            ra = rc.abs()
            rel = torch.where(ra > 0, diff / ra, torch.zeros_like(diff))
            res.max_rel_err = max(res.max_rel_err, float(rel.max().item()))
        if bool(close.all().item()):
            continue
        bad = ~close
        n_bad = int(bad.sum().item())
        raw = (oc - rc).abs()
        res.nonfinite_mismatches += int((bad & ~torch.isfinite(raw)).sum().item())
        if res.index is None:
            first = int(torch.argmax(bad.to(torch.uint8)).item())
            res.index = _unravel(start + first, tuple(ref.shape))
            res.expected = rc[first].item()
            res.actual = oc[first].item()
        res.mismatches += n_bad
    if res.mismatches:
        res.ok = False
        res.check = "values"
        total = r.numel()
        nan_note = (f"; {res.nonfinite_mismatches} non-finite (NaN/inf) where the reference "
                    "differs" if res.nonfinite_mismatches else "")
        res.message = (f"output mismatch at index {res.index}: expected {_fmt(res.expected)}, "
                       f"got {_fmt(res.actual)} ({res.mismatches} of {total} elements differ; "
                       f"max_abs_err {res.max_abs_err:.4g}, atol {tol.atol:g}, "
                       f"rtol {tol.rtol:g}{nan_note})")
    return res


def effective_tolerance(ref: torch.Tensor, tol: Tolerance) -> Tolerance:
    """The tolerance profiles are meant for outputs of order one. When the typical (mean)
    reference magnitude is below atol, so that a constant or all-zero output would pass
    almost everywhere (softmax over 16384 columns gives values near 6e-5; over 128 columns
    near 8e-3, with a few values just above atol), atol is scaled by the largest reference
    magnitude, so that a kernel computing part of the output and filling the rest with a
    guess still fails."""
    if ref.numel() == 0 or not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        return tol
    flat, wide = ref.detach().reshape(-1), _wide_dtype(ref.dtype)
    largest, total = 0.0, 0.0
    for start in range(0, flat.numel(), _CHUNK):  # chunks bound the temporary memory
        mags = torch.nan_to_num(flat[start: start + _CHUNK].to(wide).abs(), nan=0.0, posinf=0.0)
        largest = max(largest, float(mags.max().item()))
        total += float(mags.sum().item())
    mean = total / flat.numel()
    if largest == 0.0 or mean * (1.0 - tol.rtol) > tol.atol:
        return tol
    return Tolerance(tol.name, tol.atol * largest, tol.rtol)


def compare_tensor(out: Any, ref: torch.Tensor, tol: Tolerance) -> Comparison:
    """Structural checks, then values."""
    if type(out) is not torch.Tensor:
        if isinstance(out, torch.Tensor):
            return Comparison(False, f"output is a torch.Tensor subclass "
                              f"({type(out).__module__}.{type(out).__qualname__}); return a "
                              "plain torch.Tensor", "dense_output")
        return Comparison(False, f"output is a {type(out).__qualname__}, not a torch.Tensor",
                          "dense_output")
    if out.layout != torch.strided:
        return Comparison(False, f"output layout is {out.layout}, expected a dense strided "
                          "tensor", "dense_output")
    if tuple(out.shape) != tuple(ref.shape):
        return Comparison(False, f"output shape {list(out.shape)} differs from the reference "
                          f"shape {list(ref.shape)}", "shape")
    if out.dtype != ref.dtype:
        return Comparison(False, f"output dtype {out.dtype} differs from the reference dtype "
                          f"{ref.dtype}", "dtype")
    if out.device != ref.device:
        return Comparison(False, f"output is on {out.device}, the reference on {ref.device}",
                          "device")
    used = effective_tolerance(ref, tol)
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        used = Tolerance(tol.name, 0.0, 0.0)  # integers and booleans: exactly
    res = _compare_values(out, ref, used)
    if used is not tol:
        res.atol_used = used.atol
        if not res.ok:
            res.message += (f" (atol scaled to {used.atol:.3g}: every reference value is below "
                            f"atol {tol.atol:g}, so an all-zero output would otherwise pass)")
    return res


def compare_outputs(out: Any, ref: Any, tol: Tolerance) -> Comparison:
    """Compares a candidate output with the reference output (tensor, or tuple/list)."""
    if isinstance(ref, torch.Tensor):
        return compare_tensor(out, ref, tol)
    if isinstance(ref, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(ref):
            got = f"a {type(out).__name__} of {len(out)}" if isinstance(out, (tuple, list)) \
                else f"a {type(out).__name__}"
            return Comparison(False, f"output is {got}, the reference a {type(ref).__name__} "
                              f"of {len(ref)}", "structure")
        total = Comparison(True)
        for k, (o, r) in enumerate(zip(out, ref, strict=True)):
            c = compare_outputs(o, r, tol)
            total.max_abs_err = max(total.max_abs_err, c.max_abs_err)
            if c.atol_used is not None:
                total.atol_used = min(total.atol_used or c.atol_used, c.atol_used)
            total.max_rel_err = max(total.max_rel_err, c.max_rel_err)
            if not c.ok and total.ok:
                total.ok, total.check = False, c.check
                total.message = f"output[{k}]: {c.message}"
                total.index = [k] + (c.index or []) if c.index is not None else None
                total.expected, total.actual = c.expected, c.actual
                total.mismatches, total.nonfinite_mismatches = c.mismatches, c.nonfinite_mismatches
        return total
    if isinstance(ref, float) and isinstance(out, (int, float)):
        ok = abs(out - ref) <= tol.atol + tol.rtol * abs(ref)
        return Comparison(ok, "" if ok else f"output {out!r} != reference {ref!r}", "values")
    ok = type(out) is type(ref) and out == ref
    return Comparison(ok, "" if ok else f"output {out!r} != reference {ref!r}", "values")


def follows_reference(out: Any, ref: Any, tol: Tolerance) -> float | None:
    """On outputs where the tolerance cannot tell a constant from the answer (every reference
    value within tolerance of the reference's mean: a row mean of uniform noise), the
    correlation between the output's and the reference's deviations from their means. An
    honest kernel scores about 1; a constant plus noise about 0. None when the check does not
    apply (the tolerance discriminates, too few elements, a constant reference)."""
    if type(out) is not torch.Tensor or not isinstance(ref, torch.Tensor) \
            or not ref.dtype.is_floating_point or ref.numel() < 8 or out.shape != ref.shape:
        return None
    step = max(1, -(-ref.numel() // _FOLLOW_SAMPLES))
    r = ref.detach().reshape(-1)[::step].to(torch.float64)
    o = out.detach().reshape(-1)[::step].to(torch.float64)
    if not bool(torch.isfinite(r).all()) or not bool(torch.isfinite(o).all()):
        return None
    used = effective_tolerance(ref, tol)
    mean = torch.full_like(r, float(r.mean()))
    if not bool(_isclose(mean, r, rtol=used.rtol, atol=used.atol).all()):
        return None  # a constant fails the values check already
    rc, oc = r - r.mean(), o - o.mean()
    rr, oo = float((rc * rc).sum()), float((oc * oc).sum())
    if rr == 0.0:
        return None
    if oo == 0.0:
        return 0.0
    return float((rc * oc).sum()) / (rr * oo) ** 0.5


def bitwise_equal(a: Any, b: Any) -> bool:
    """Same structure, and tensors with identical shape, dtype, strides and bytes."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
            return False
        if a.numel() == 0:
            return True
        return bool(_equal(a.detach().contiguous().reshape(-1).view(torch.uint8),
                           b.detach().contiguous().reshape(-1).view(torch.uint8)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(bitwise_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def modified_input(pristine: list[Any], used: list[Any]) -> int | None:
    """Index of the first argument whose tensors changed (values, shape or strides)."""
    for k, (p, u) in enumerate(zip(pristine, used, strict=False)):
        pt, ut = list(tensors_in(p)), list(tensors_in(u))
        if len(pt) != len(ut):
            return k
        for a, b in zip(pt, ut, strict=True):
            if a.stride() != b.stride() or not bitwise_equal(a, b):
                return k
    return None


def fingerprint(obj: Any, samples: int = 4096) -> tuple[Any, ...]:
    """A cheap summary that is equal for bitwise-equal outputs: per tensor its shape, dtype,
    byte sum and `samples` evenly spaced bytes (no copy of the output is kept)."""
    parts: list[Any] = []
    for t in tensors_in(obj):
        flat = t.detach().contiguous().reshape(-1)
        raw = flat.view(torch.uint8) if flat.numel() else flat
        step = max(1, raw.numel() // samples)
        byte_sum = sum(int(raw[i: i + _CHUNK].sum(dtype=torch.int64).item())
                       for i in range(0, raw.numel(), _CHUNK))  # int64 copies, chunk-sized
        parts.append((tuple(t.shape), str(t.dtype), byte_sum,
                      bytes(raw[::step][:samples].cpu().tolist())))
    if not isinstance(obj, (torch.Tensor, list, tuple, dict)):
        parts.append(repr(obj))
    return tuple(parts)


def poison_freed_memory(sizes: list[int], dev: torch.device) -> None:
    """Allocates blocks of the given byte sizes, fills them with 0xFF (NaN for floats) and
    frees them, so memory a candidate gets uninitialised from the allocator is not a stale
    correct answer. Effective with the CUDA caching allocator; best effort on the CPU."""
    blocks = [torch.empty(n, dtype=torch.uint8, device=dev).fill_(0xFF) for n in sizes if n > 0]
    del blocks


def _output_sizes(obj: Any) -> list[int]:
    return [t.numel() * t.element_size() for t in tensors_in(obj)]


class TrialSource(Protocol):
    def pristine(self, trial: int) -> TrialData:
        """Inputs of trial `trial` (never mutated by the caller)."""

    def reference(self, trial: int) -> Any:
        """Reference output of trial `trial` (computed on a clone, then cached)."""

    def stress(self, kind: str) -> TrialData | None:
        """Trial 0's inputs redrawn off-distribution with its reference (None: skipped)."""


@dataclass
class CorrectnessOutcome:
    record: dict[str, Any]
    status: str | None = None  # None: all trials passed; else the failure status
    message: str = ""
    poisoned: bool = False
    constant_trials: tuple[int, int] | None = None  # identical outputs, different references
    outputs_checked: int = 0
    trial_errors: list[str] = field(default_factory=list)
    # Per candidate call: (aten ops seen by the dispatch-level audit, custom launches).
    call_ops: list[tuple[dict[str, int], int]] = field(default_factory=list)
    # Audit-hook events the candidate caused during the trials (EventWatch kinds).
    events: dict[str, list[str]] = field(default_factory=dict)
    # (trial, correlation) of the least reference-like near-constant output (follows_reference)
    weak_follow: tuple[int, float] | None = None


def run_trials(trials: int, tol: Tolerance, source: TrialSource,
               run_candidate: Callable[[list[Any]], Any], dev: torch.device) -> CorrectnessOutcome:
    """Runs the trials; stops early only when the candidate raises. Every candidate call runs
    under the dispatch-level op counter and the event watch, so work done in torch (or through
    files, frames, gc) on the calls that produce the checked outputs is seen by the audit."""
    start = _perf_counter()
    record: dict[str, Any] = {
        "ok": False, "trials": trials, "passed": 0, "atol": tol.atol, "rtol": tol.rtol,
        "max_abs_err": 0.0, "max_rel_err": 0.0, "first_mismatch": None,
        "checks": ["inputs_unmodified", "output_aliases_input", "dense_output", "shape", "dtype",
                   "device", "values", "output_varies", "stress"],
    }
    outcome = CorrectnessOutcome(record)
    prev: tuple[Any, Any] | None = None  # fingerprints (candidate, reference) of the last trial
    for i in range(trials):
        data = source.pristine(i)
        args = clone_args(data.inputs)
        # After the clone (which would otherwise take the poisoned blocks), two blocks of each
        # size: an output the candidate allocates and leaves unwritten then reads as NaN.
        poison = _output_sizes(data.reference) if data.has_reference else []
        poison_freed_memory(2 * (poison + _output_sizes(data.inputs)), dev)
        out = _watched_call(run_candidate, args, outcome, f"trial {i}")
        if out is _RAISED:
            break
        changed = modified_input(data.inputs, args)
        shared = aliased_inputs(out, args)
        del args
        ref = source.reference(i)
        shared -= getattr(data, "ref_aliased", frozenset())  # set by the reference's run
        if changed is not None:
            cmp = Comparison(False, f"candidate modified its input #{changed}",
                             "inputs_unmodified")
        elif shared:
            cmp = Comparison(False, f"the output shares memory with input #{min(shared)} (it "
                             "is that input or a view of it) where the reference returns a "
                             "tensor of its own: compute into a new tensor (a caller writing "
                             "to the output would change its input)", "output_aliases_input")
        else:
            cmp = compare_outputs(out, ref, tol)
        if cmp.atol_used is not None:
            record["atol_effective"] = min(record.get("atol_effective", tol.atol), cmp.atol_used)
        record["max_abs_err"] = max(record["max_abs_err"], cmp.max_abs_err)
        record["max_rel_err"] = max(record["max_rel_err"], cmp.max_rel_err)
        if cmp.ok:
            record["passed"] += 1
            # how far the candidate is from the reference where it is checked: the timed
            # checks hold it to this (it must not compute less precisely while it is timed)
            record["max_normwise_rel_err"] = max(record.get("max_normwise_rel_err", 0.0),
                                                 normwise_rel_error(out, ref))
            follow = follows_reference(out, ref, tol)
            if follow is not None and follow < WEAK_FOLLOW and (
                    outcome.weak_follow is None or follow < outcome.weak_follow[1]):
                outcome.weak_follow = (i, follow)
        elif outcome.status is None:
            outcome.status = "incorrect"
            outcome.message = f"trial {i}: {cmp.message}"
            record["failed_check"] = cmp.check
            if cmp.index is not None:
                record["first_mismatch"] = {"trial": i, "index": cmp.index,
                                            "expected": cmp.expected, "actual": cmp.actual,
                                            "mismatches": cmp.mismatches,
                                            "nonfinite_mismatches": cmp.nonfinite_mismatches}
        if type(out) is torch.Tensor or isinstance(out, (tuple, list)):
            now = (fingerprint(out), fingerprint(ref))
            if prev is not None and outcome.constant_trials is None \
                    and now[0] == prev[0] and now[1] != prev[1]:
                outcome.constant_trials = (i - 1, i)
            prev = now
        outcome.outputs_checked += 1
        scrub(ref)  # the evaluator's copy: nothing left for a later call to read
        del out, ref
    if outcome.status is None and hasattr(source, "stress"):
        _stress_trials(source, run_candidate, tol, outcome, dev)
    record["ok"] = outcome.status is None
    record["duration_s"] = round(_perf_counter() - start, 6)
    return outcome


_RAISED = object()


def close_normwise(out: Any, ref: Any, tol: Tolerance) -> tuple[bool, str]:
    """stress.normwise_error with the element-wise rule's effective atol (scaled down for
    outputs whose values are mostly below atol)."""
    atol = effective_tolerance(ref, tol).atol if isinstance(ref, torch.Tensor) else tol.atol
    return normwise_error(out, ref, atol, tol.rtol)


def _watched_call(run_candidate: Callable[[list[Any]], Any], args: list[Any],
                  outcome: CorrectnessOutcome, label: str) -> Any:
    """One candidate call under the op counter and the event watch, recorded in `outcome`;
    _RAISED (with the status set) when it raised."""
    recorder = active_recorder()
    counter, watch = OpCounter(recorder), EventWatch(recorder)
    launched = recorder.total() if recorder is not None else 0
    try:
        with watch, counter:
            out = run_candidate(args)
    except Hacked:
        raise
    except BaseException as e:  # noqa: BLE001 - candidate code may raise anything
        outcome.poisoned = errors.is_cuda_poison(e)
        outcome.status = "compile_error" if errors.is_compile_failure(e) else "runtime_error"
        what = "kernel does not compile" if outcome.status == "compile_error" \
            else "ModelNew.forward raised"
        outcome.message = f"{label}: {what} {errors.describe(e)}"
        outcome.record["error"] = errors.traceback_tail(e)
        return _RAISED
    finally:
        for kind, items in watch.seen.items():
            outcome.events.setdefault(kind, []).extend(
                x for x in items if x not in outcome.events.get(kind, []))
    outcome.call_ops.append((dict(counter.counts),
                             (recorder.total() - launched) if recorder is not None else 0))
    return out


def _stress_trials(source: TrialSource, run_candidate: Callable[[list[Any]], Any],
                   tol: Tolerance, outcome: CorrectnessOutcome, dev: torch.device) -> None:
    """The stress trials (stress.py), compared norm-wise; the first failure is the outcome."""
    record = outcome.record
    record["stress"], record["stress_skipped"] = {}, 0
    domain = getattr(source, "domain", None)
    if domain is not None and domain.restricts():
        record["stress_domain"] = domain.describe()
    for kind in STRESS_KINDS:
        data = source.stress(kind)
        if data is None:
            record["stress"][kind] = ("skipped: the reference raised or has no finite value "
                                      "on these inputs")
            record["stress_skipped"] += 1
            continue
        out = _watched_call(run_candidate, clone_args(data.inputs), outcome, f"stress trial {kind}")
        if out is _RAISED:
            return
        ref = device_copy(data.reference, dev)  # made after the call, scrubbed after use
        ok, why = close_normwise(out, ref, tol)
        scrub(ref)
        record["stress"][kind] = "ok" if ok else why
        del out, ref
        if not ok:
            outcome.status = "incorrect"
            outcome.message = (f"stress trial {kind!r} ({STRESS_TEXT.get(kind, kind)}): "
                               f"{why}; the kernel must compute the function, not an "
                               "approximation that holds only for get_inputs()' distribution")
            record["failed_check"] = f"stress_{kind}"
            return
