"""Input cases: the shapes a problem serves, each checked and timed on its own.

A problem may define `get_input_cases()` returning a list of
`{"name": str, "inputs": factory-or-list, "weight": float}`: `inputs` is a function called
like get_inputs() (under the trial's seed, on the device) or a list of forward arguments
(copied for every trial); `weight` (default 1) is how often that case runs in the workload.
A problem without it is one case, its get_inputs(), and evaluates exactly as before.

Each case becomes a Problem of its own (its get_inputs, a source hash salted with the case's
name so cached inputs never mix); the evaluation runs every stage on each of them. The
speedup over the cases is their weighted geometric mean (`combine`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

from kernelsmith_worker import errors
from kernelsmith_worker.inputs import clone_args
from kernelsmith_worker.loader import Problem

CASES_FN = "get_input_cases"
MAX_CASES = 32
_Z95 = 1.959964  # the two-sided 95 % quantile of the normal distribution


class CaseError(Exception):
    """get_input_cases() is missing pieces or raised; the message says what to fix."""

    def __init__(self, message: str, tail: str = "", poisoned: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.tail = tail
        self.poisoned = poisoned


@dataclass(frozen=True)
class InputCase:
    name: str
    weight: float
    problem: Problem  # get_inputs is this case's; sha256 names the case too


def _factory(inputs: Any) -> Callable[[], Any]:
    if callable(inputs):
        return inputs
    fixed = list(inputs)
    return lambda: clone_args(fixed)


def _case(problem: Problem, i: int, entry: Any, seen: set[str]) -> InputCase:
    where = f"problem {problem.path}: {CASES_FN}()[{i}]"
    if not isinstance(entry, dict):
        raise CaseError(f"{where} is a {type(entry).__name__}; each case must be a dict "
                        '{"name": str, "inputs": function or list, "weight": number}')
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip() or name in seen:
        raise CaseError(f"{where}: `name` must be a non-empty string unique among the cases "
                        f"(got {name!r})")
    seen.add(name)
    inputs = entry.get("inputs")
    if not callable(inputs) and not isinstance(inputs, (list, tuple)):
        raise CaseError(f"{where} ({name}): `inputs` must be a function returning the forward "
                        f"arguments (like get_inputs) or a list of them, not "
                        f"{type(inputs).__name__}")
    weight = entry.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or \
            not math.isfinite(weight) or weight <= 0:
        raise CaseError(f"{where} ({name}): `weight` must be a positive number (how often the "
                        f"case runs in the workload), not {weight!r}")
    unknown = sorted(set(entry) - {"name", "inputs", "weight"})
    if unknown:
        raise CaseError(f"{where} ({name}): unknown keys {unknown}; a case has name, inputs "
                        "and weight")
    sha = hashlib.sha256(f"{problem.sha256}\0{name}".encode()).hexdigest()
    return InputCase(name, float(weight),
                     dataclasses.replace(problem, sha256=sha, get_inputs=_factory(inputs)))


def input_cases(problem: Problem) -> list[InputCase] | None:
    """The problem's declared cases, or None for a plain problem (its get_inputs() is the one
    case). Raises CaseError naming what is wrong."""
    fn = getattr(problem.module, CASES_FN, None)
    if fn is None:
        return None
    if not callable(fn):
        raise CaseError(f"problem {problem.path}: {CASES_FN} must be a function")
    try:
        raw = fn()
    except BaseException as e:  # noqa: BLE001 - problem code may raise anything
        raise CaseError(f"problem {problem.path}: {CASES_FN}() raised {errors.describe(e)}",
                        errors.traceback_tail(e), errors.is_cuda_poison(e)) from e
    if not isinstance(raw, (list, tuple)) or not raw:
        raise CaseError(f"problem {problem.path}: {CASES_FN}() must return a non-empty list of "
                        '{"name", "inputs", "weight"} dicts')
    if len(raw) > MAX_CASES:
        raise CaseError(f"problem {problem.path}: {CASES_FN}() returned {len(raw)} cases; at most "
                        f"{MAX_CASES} (each is checked and timed on its own): merge rare shapes")
    seen: set[str] = set()
    return [_case(problem, i, entry, seen) for i, entry in enumerate(raw)]


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and \
        math.isfinite(x) and x > 0 else None


def weighted_geomean(values: list[float], weights: list[float]) -> float:
    total = sum(weights)
    return math.exp(sum(w * math.log(v) for v, w in zip(values, weights)) / total)


def _combined_ci(speedups: list[float], cis: list[Any], weights: list[float]) -> list[float] | None:
    """The 95 % interval of the weighted geometric mean: each case's interval read as a normal
    one in log space (half-width / 1.96 = its standard error), cases independent (timed
    apart), so the log-mean's standard error is sqrt(sum((w_i / W)^2 se_i^2))."""
    total = sum(weights)
    var = 0.0
    for ci, w in zip(cis, weights):
        if not isinstance(ci, (list, tuple)) or len(ci) != 2:
            return None
        lo, hi = _num(ci[0]), _num(ci[1])
        if lo is None or hi is None or hi < lo:
            return None
        se = (math.log(hi) - math.log(lo)) / (2 * _Z95)
        var += (w / total) ** 2 * se * se
    center = math.log(weighted_geomean(speedups, weights))
    half = _Z95 * math.sqrt(var)
    return [math.exp(center - half), math.exp(center + half)]


def combine(timings: list[dict[str, Any]], weights: list[float]) -> dict[str, Any]:
    """One timing record for the workload from the cases' records (same order as weights):
    `speedup` the weighted geometric mean, `speedup_ci95` as _combined_ci, `ref_us`/`cand_us`
    the weighted mean time of a call, `cand_cv` the largest case's; `independent` combined the
    same way when every case has one. Raises ValueError when a case has no speedup."""
    speedups = [_num(t.get("speedup")) for t in timings]
    if any(s is None for s in speedups):
        raise ValueError("a case was timed without a speedup")
    s = [float(x) for x in speedups if x is not None]
    total = sum(weights)

    def mean(key: str, records: list[dict[str, Any]]) -> float | None:
        vals = [_num(r.get(key)) for r in records]
        if any(v is None for v in vals):
            return None
        return sum(w * float(v) for v, w in zip(vals, weights) if v is not None) / total

    cvs = [t.get("cand_cv") for t in timings if isinstance(t.get("cand_cv"), (int, float))]
    out: dict[str, Any] = {
        "ok": True, "combined": "weighted_geomean", "cases": len(timings),
        "method": timings[0].get("method"), "speedup": weighted_geomean(s, weights),
        "speedup_ci95": _combined_ci(s, [t.get("speedup_ci95") for t in timings], weights),
        "ref_us": mean("ref_us", timings), "cand_us": mean("cand_us", timings),
        "cand_cv": max(cvs) if cvs else None,
    }
    ind = [t.get("independent") for t in timings]
    if all(isinstance(i, dict) and _num(i.get("speedup")) for i in ind):
        recs = [i for i in ind if isinstance(i, dict)]
        ind_s = [float(i["speedup"]) for i in recs]
        ranges = [i.get("speedup_range") for i in recs]
        lo_hi = None
        if all(isinstance(r, (list, tuple)) and len(r) == 2 and _num(r[0]) and _num(r[1])
               for r in ranges):
            lo_hi = [weighted_geomean([float(r[0]) for r in ranges if r], weights),
                     weighted_geomean([float(r[1]) for r in ranges if r], weights)]
        out["independent"] = {"method": recs[0].get("method"),
                              "speedup": weighted_geomean(ind_s, weights),
                              "speedup_range": lo_hi, "ref_ms": mean("ref_ms", recs),
                              "cand_ms": mean("cand_ms", recs)}
    elif any(isinstance(i, dict) for i in ind):
        errs = [str(i.get("error")) for i in ind if isinstance(i, dict) and i.get("error")]
        out["independent"] = {"error": "; ".join(errs) or "a case has no independent speedup"}
    return out
