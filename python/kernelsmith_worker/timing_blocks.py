"""Timed blocks of the CUDA timing stage: each function in its own sustained state (heat,
then blocks ref, cand, cand, ref, then both on signed values), fresh input values before
every sample, random candidate samples checked against the reference; then the steady-state
blocks (each function back to back, no new values between samples), the figure a program
that runs the kernel continuously gets. timing_cuda.py builds the runners (CUDA graphs or
eager calls) these blocks drive."""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import torch

from . import stats
from .timed_account import BlockAccount
from .timing_policy import Check, SlotFn, TimedInputs, TimingConfig, _no_check

_urandom = os.urandom  # captured at worker start, before any candidate is imported

if TYPE_CHECKING:
    from .timing_cuda import CudaApi

# Captured when the worker starts, before any candidate is imported.
_perf_counter = time.perf_counter


class _NoAccount:
    """No accounting of blocks (CUDA graphs: their replays are accounted separately)."""

    def open(self) -> None:
        pass

    def aside(self) -> Any:
        return contextlib.nullcontext()

    def close(self, counted: bool, units: Counter, calls: int) -> None:
        pass


def _elapsed_s(e0: Any, e1: Any) -> float:
    return e0.elapsed_time(e1) / 1e3


def _tensors(out: object) -> list[torch.Tensor] | None:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)) and out and all(isinstance(t, torch.Tensor) for t in out):
        return list(out)
    return None


def _checkable(outs: list[object]) -> list[int]:
    """Calls of a sample whose output no later call overwrote (call j runs before call j-1):
    a kernel that reuses one output buffer leaves only the last call's values in it. Outputs
    are compared by the memory their storages span, so views of one buffer and tensors made
    over overlapping memory count as shared."""
    later: list[tuple[int, int]] = []
    keep: list[int] = []
    for j, out in enumerate(outs):  # j = 0 ran last
        spans = [_span(t) for t in (_tensors(out) or [])]
        if not any(a < d and c < b for a, b in spans for c, d in later):
            keep.append(j)
        later += spans
    return keep or [0]


def _span(t: torch.Tensor) -> tuple[int, int]:
    """[start, end) of the memory of t's storage."""
    try:
        s = t.untyped_storage()
        start = int(s.data_ptr())
        return start, start + max(int(s.nbytes()), 1)
    except Exception:  # noqa: BLE001 - no storage (a fake tensor in tests)
        return id(t), id(t) + 1


def _timed_sample(api: CudaApi, runner: Any, name: str) -> tuple[Any, Any, float]:
    """One sample of `name`: (start event, end event, host seconds). The eager runner is also
    timed by the host clock across device-wide syncs, so work on any stream counts."""
    e0, e1 = api.event(), api.event()
    if runner.method != "cuda_events":
        runner.run(name, e0, e1)
        return e0, e1, 0.0
    api.synchronize()
    wall = _perf_counter()
    runner.run(name, e0, e1)
    return e0, e1, _perf_counter() - wall


def _check_before(runner: Any, name: str, check: Check) -> None:
    """Before an eager reference sample: the reference runs the torch functions of the moment,
    so a patch the candidate left in place would slow it (a graph replays what was captured,
    checked before the capture)."""
    if name == "ref" and runner.method == "cuda_events":
        check("before a reference sample")


def _random_below(n: int) -> int:
    """A uniform draw in [0, n) from the OS's entropy (captured at worker start: a candidate
    that patches `random` or `os.urandom` changes nothing here)."""
    return int.from_bytes(_urandom(8), "little") % n


def _check_plan(n_cand: int, count: int) -> set[int]:
    """Which candidate samples (indices over both candidate blocks) are checked: drawn from
    the OS's entropy, not from the request's seed, so the candidate cannot know them in
    advance."""
    keyed = sorted(range(n_cand), key=lambda i: _urandom(8))
    return set(keyed[:min(count, n_cand)])


def _sustained_blocks(api: CudaApi, runner: Any, inputs: TimedInputs, fns: dict[str, SlotFn],
                      replay_s: dict[str, float], cfg: TimingConfig,
                      check: Check = _no_check, account: BlockAccount | None = None) -> dict:
    """Blocks ref, cand, cand, ref (a linear drift cancels) on values of the problem's own
    distribution, then ref and cand on signed values (inputs.refresh(signed=True)). Before
    a function's block it runs alone for `heat_s`, untimed, so each is measured at the clock
    its own sustained load gives. Every sample is preceded by new input values and an L2
    flush. At random candidate samples the output is compared with a reference call on the
    same values; the sample after such a check (the device idled while the host compared)
    is not kept. `account` (eager calls): the kernels of the candidate's blocks are accounted
    from the kernel log, checks aside. Returns per-call samples under "ref", "cand",
    "ref_signed", "cand_signed", with heats, heat_s, blocks, checked, planned (checks the plan
    drew), mismatch and tampered."""
    k = runner.calls_per_sample
    order: tuple[tuple[str, bool], ...] = (("ref", False), ("cand", False), ("cand", False),
                                           ("ref", False))
    if inputs.checked:  # evaluator-owned values: the signed blocks mean something
        order += (("ref", True), ("cand", True))
    n = {name: min(max(math.ceil(cfg.block_s / max(t, 1e-9)), cfg.block_min_samples),
                   cfg.block_max_samples) for name, t in replay_s.items()}
    n_signed = {name: max(cfg.block_min_samples, math.ceil(v * cfg.signed_block_share))
                for name, v in n.items()}
    plan = _check_plan(2 * n["cand"] + n_signed["cand"], cfg.timed_checks) \
        if inputs.checked else set()
    out: dict[str, Any] = {"ref": [], "cand": [], "ref_signed": [], "cand_signed": [],
                           "heats": 0, "heat_s": 0.0, "blocks": [], "checked": 0,
                           "mismatch": False, "tampered": None, "planned": len(plan),
                           "aliasing_appeared": False}
    seen_cand = 0
    acct = account or _NoAccount()
    for b, (name, signed) in enumerate(order):
        acct.open()
        units = 0
        if b == 0 or order[b - 1][0] != name:
            t0 = _perf_counter()
            for _ in range(min(math.ceil(cfg.heat_s / max(replay_s[name], 1e-9)), 2000)):
                inputs.refresh(signed)
                runner.run(name)
                units += 1
            out["heats"] += 1
            out["heat_s"] += _perf_counter() - t0  # host time to queue: the device runs on
        evs: list[tuple[Any, Any, bool, float]] = []
        skip_next = False
        for _ in range((n_signed if signed else n)[name]):
            inputs.refresh(signed)
            _check_before(runner, name, check)
            e0, e1, wall = _timed_sample(api, runner, name)
            units += 1
            evs.append((e0, e1, not skip_next, wall))
            skip_next = False
            if name == "cand":
                if seen_cand in plan and not out["mismatch"]:
                    calls = _checkable(runner.outputs["cand"])
                    if len(calls) < runner.calls_per_sample:  # set up for distinct outputs
                        out["aliasing_appeared"] = True
                    j = calls[_random_below(len(calls))]  # any call, not only the last
                    api.synchronize()
                    with acct.aside():
                        out["tampered"] = out["tampered"] or inputs.tampered()
                        with inputs.pristine():  # not what the candidate may have written
                            expected = fns["ref"](j)
                        out["checked"] += 1
                        if not inputs.agree(runner.outputs["cand"][j], expected):
                            out["mismatch"] = True
                        del expected
                    skip_next = True
                seen_cand += 1
        api.synchronize()
        acct.close(name == "cand", Counter({"signed" if signed else "refresh": units}),
                   units * k)
        check(f"during the timing of the {name} block")
        times = [max(_elapsed_s(e0, e1), wall) * 1e6 / k for e0, e1, keep, wall in evs if keep]
        key = f"{name}_signed" if signed else name
        out[key] += times
        out["blocks"].append({"fn": key, "samples": len(times),
                              "median_us": stats.median(times) if times else None})
    return out


def _steady_blocks(api: CudaApi, runner: Any, replay_s: dict[str, float],
                   cfg: TimingConfig, check: Check = _no_check,
                   account: BlockAccount | None = None) -> dict:
    """Each function in steady state, the way a program that calls it continuously (and
    triton.testing.do_bench_cudagraph) sees it: after `steady_heat_s` alone, samples back to
    back with no input refresh between them (the L2 flush stays: a short read, ~1 % of a
    sample). The refreshed blocks leave the device in memory-bound gaps that lower its
    average power, so a power-limited tensor-core kernel runs there at a higher clock than it
    sustains; here it does not. Order cand, ref. Returns per-call samples under "ref" and
    "cand" and the block summaries. `account`: as in _sustained_blocks."""
    k = runner.calls_per_sample
    out: dict[str, Any] = {"ref": [], "cand": [], "blocks": []}
    acct = account or _NoAccount()
    for name in ("cand", "ref"):
        acct.open()
        t = max(replay_s[name], 1e-9)
        heat = min(math.ceil(cfg.steady_heat_s / t), 2000)
        for _ in range(heat):
            runner.run(name)
        n = min(max(math.ceil(cfg.steady_s / t), cfg.block_min_samples), cfg.block_max_samples)
        evs: list[tuple[Any, Any, float]] = []
        for _ in range(n):
            _check_before(runner, name, check)
            evs.append(_timed_sample(api, runner, name))
        api.synchronize()
        acct.close(name == "cand", Counter({"flush": heat + n}), (heat + n) * k)
        check(f"during the steady-state timing of the {name}")
        times = [max(_elapsed_s(e0, e1), wall) * 1e6 / k for e0, e1, wall in evs]
        out[name] = times
        out["blocks"].append({"fn": f"{name}_steady", "samples": len(times),
                              "median_us": stats.median(times) if times else None})
    return out
