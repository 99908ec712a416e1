"""Timed blocks of the CUDA timing stage: each function in its own sustained state (heat,
then rounds of blocks ref, cand, cand, ref until the sequential rule of sequential.py stops,
then both on signed values), fresh input values before every sample, random candidate
samples checked against the reference; then the steady-state blocks (each function back to
back, no new values between samples), the figure a program that runs the kernel
continuously gets. timing_cuda.py builds the runners (CUDA graphs or
eager calls) these blocks drive."""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import torch

from . import sequential, stats
from .inputs import map_tensors
from .timed_account import BlockAccount
from .timing_policy import Check, SlotFn, TimedInputs, TimingConfig, _no_check, is_stable

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


def _disjoint(outs: list[object]) -> bool:
    """Whether no call's output shares memory with another call's (every call of the sample
    checkable: len(_checkable(outs)) == len(outs)), in O(n log n) for samples of many calls.
    Each call's spans are merged first, so two spans that overlap in the sweep are two
    calls'."""
    spans: list[tuple[int, int]] = []
    for out in outs:  # a call's own outputs may share memory (views of one buffer)
        own = sorted(_span(t) for t in (_tensors(out) or []))
        merged: list[list[int]] = []
        for a, b in own:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        spans += [(a, b) for a, b in merged]
    end = -1
    for a, b in sorted(spans):
        if a < end:
            return False
        end = max(end, b)
    return True


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


def check_sample(outs: list[object], fns: dict[str, SlotFn], inputs: TimedInputs,
                 got: dict, calls: list[int] | None = None) -> None:
    """One timed check of a sample whose calls returned `outs` (call j read slot j): a random
    call whose output no later call overwrote, not only the last, compared with the
    reference on the values the last refresh wrote (not what the candidate may have written
    since), and with the candidate itself called again on copies of those values outside
    the timing (a candidate that computes less while timed, having told a timed call from a
    checked one, differs from itself). Updates got's "checked", "mismatch", "unreproduced"
    and "tampered". `calls`: the calls that may be checked, where the caller knows better.
    """
    calls = calls or _checkable(outs)
    j = calls[_random_below(len(calls))]
    got["tampered"] = got["tampered"] or inputs.tampered()
    timed = map_tensors(outs[j], lambda t: t.clone())  # the repeat may reuse its buffer
    with inputs.pristine():
        expected = fns["ref"](j)
        again = fns["cand"](j)
        got["unreproduced"] = got.get("unreproduced") or not inputs.reproduced(
            timed, again, lambda: fns["cand"](j))
    got["checked"] += 1
    got["mismatch"] = got["mismatch"] or not inputs.agree(timed, expected)


def _check_plan(strata: list[int], count: int) -> set[int]:
    """Which candidate samples (indices over the segment's candidate blocks, of the sizes in
    `strata`, in the order they run) are checked: at least one in every block, the rest
    anywhere, drawn from the OS's entropy, not from the request's seed, so the candidate
    cannot know them in advance. A block per kind of timed values (the problem's own, signed)
    is always looked at: a kernel wrong on one kind only cannot pass by luck of the draw."""
    keyed = sorted(range(sum(strata)), key=lambda i: _urandom(8))
    picked: set[int] = set()
    start = 0
    for n in strata:
        if n > 0 and len(picked) < count:
            picked.add(next(i for i in keyed if start <= i < start + n))
        start += n
    for i in keyed:
        if len(picked) >= count:
            break
        picked.add(i)
    return picked


def _heat(api: CudaApi, runner: Any, name: str, cycle_s: float, min_s: float, max_s: float,
          cfg: TimingConfig, before: Any = None) -> tuple[int, float, float]:
    """`name` alone, untimed for the figures, until the per-call times of successive windows
    agree (at least min_s, at most max_s; min_s == max_s: just that long): each function is
    measured at the clock its own sustained load gives. Windows last about warmup_window_s
    at `cycle_s` a sample and end with a sync, so the seconds counted are the device's.
    `before()` runs before every sample. Returns (samples run, seconds, measured seconds a
    sample)."""
    t0 = _perf_counter()
    windows: list[float] = []
    units = 0
    while True:
        evs = []
        for _ in range(min(max(math.ceil(cfg.warmup_window_s / cycle_s), 2), 2000)):
            if before is not None:
                before()
            e0, e1 = api.event(), api.event()
            runner.run(name, e0, e1)
            evs.append((e0, e1))
        evs[-1][1].synchronize()
        api.synchronize()  # eager samples on other streams too
        units += len(evs)
        windows.append(stats.median([_elapsed_s(a, b) for a, b in evs]))
        elapsed = _perf_counter() - t0
        cycle_s = max(elapsed / units, 1e-9)
        if elapsed >= max_s or (elapsed >= min_s and is_stable(
                windows, cfg.warmup_tol, cfg.warmup_stable_windows)):
            return units, elapsed, cycle_s


def heat_bounds(cfg: TimingConfig, replay_s: dict[str, float], runner: Any
                ) -> tuple[float, float]:
    """(least, most) seconds of a heat: long where a call of either function is long (the
    reference's call time, which the candidate does not choose, counts), short where both
    are launch-bound (a power-limited clock needs a long call to be reached at all)."""
    per_call = max(replay_s.values()) / max(getattr(runner, "calls_per_sample", 1), 1)
    if per_call >= cfg.heat_long_call_s:
        return cfg.heat_min_s, cfg.heat_s
    return cfg.heat_short_min_s, cfg.heat_short_s


class _Sustained:
    """One run of the sustained blocks (see _sustained_blocks)."""

    def __init__(self, api: CudaApi, runner: Any, inputs: TimedInputs, fns: dict[str, SlotFn],
                 replay_s: dict[str, float], cfg: TimingConfig, check: Check,
                 account: BlockAccount | _NoAccount) -> None:
        self.api, self.runner, self.inputs, self.fns = api, runner, inputs, fns
        self.cfg, self.check, self.acct = cfg, check, account
        self.cycle = dict(replay_s)  # seconds a sample takes, refined by each heat
        self.heat_min, self.heat_max = heat_bounds(cfg, replay_s, runner)
        self.prev: str | None = None  # the function of the previous block
        self.units = 0  # samples run (heat included) since the account opened
        self.plan: set[tuple[int, int]] = set()  # (segment, candidate sample) pairs checked
        self.seen: Counter = Counter()  # candidate samples per segment so far
        self.out: dict[str, Any] = {
            "ref": [], "cand": [], "ref_signed": [], "cand_signed": [], "heats": 0,
            "heat_s": 0.0, "check_s": 0.0, "blocks": [], "checked": 0, "mismatch": False,
            "tampered": None, "unreproduced": False, "planned": 0, "sequential": None,
            "aliasing_appeared": False}
        self.by_block: dict[str, list[list[float]]] = {"ref": [], "cand": []}

    def size(self, name: str, seconds: float) -> int:
        return min(max(math.ceil(seconds / max(self.cycle[name], 1e-9)),
                       self.cfg.block_min_samples), self.cfg.block_max_samples)

    def signed_size(self, n: int) -> int:
        return max(self.cfg.block_min_samples, math.ceil(n * self.cfg.signed_block_share))

    def add_plan(self, segment: int, strata: list[int], count: int) -> None:
        """`count` of the segment's candidate samples (blocks of the sizes in `strata`) are
        checked, at least one in each block (drawn now)."""
        if self.inputs.checked:
            self.plan |= {(segment, i) for i in _check_plan(strata, count)}
            self.out["planned"] = len(self.plan)

    def enter(self, name: str, signed: bool) -> None:
        """Opens the account of a block of `name`, with a heat first if the previous block
        was the other function's."""
        self.acct.open()
        self.units = 0
        if self.prev != name:
            self.units = self.heat(name, signed)
        self.prev = name

    def heat(self, name: str, signed: bool) -> int:
        """A heat of `name` (_heat, with new input values before every sample); refines
        self.cycle[name] (refresh + flush + replay). Returns the samples run."""
        units, elapsed, self.cycle[name] = _heat(
            self.api, self.runner, name, self.cycle[name], self.heat_min, self.heat_max,
            self.cfg, lambda: self.inputs.refresh(signed))
        self.out["heats"] += 1
        self.out["heat_s"] += elapsed
        return units

    def block(self, name: str, signed: bool, n: int, segment: int) -> list[float]:
        """n timed samples of `name` (after enter()), each after new input values and an L2
        flush. At the planned candidate samples of `segment` the output is compared with a
        reference call on the same values; the sample after such a check (the device idled
        while the host compared) is not kept."""
        api, runner, inputs, out = self.api, self.runner, self.inputs, self.out
        k = runner.calls_per_sample
        evs: list[tuple[Any, Any, bool, float]] = []
        skip_next = False
        for _ in range(n):
            inputs.refresh(signed)
            _check_before(runner, name, self.check)
            e0, e1, wall = _timed_sample(api, runner, name)
            self.units += 1
            evs.append((e0, e1, not skip_next, wall))
            skip_next = False
            if name == "cand":
                if (segment, self.seen[segment]) in self.plan and not out["mismatch"]:
                    t0 = _perf_counter()
                    self.timed_check()
                    out["check_s"] += _perf_counter() - t0
                    skip_next = True
                self.seen[segment] += 1
        api.synchronize()
        self.acct.close(name == "cand", Counter({"signed" if signed else "refresh": self.units}),
                        self.units * k)
        t0 = _perf_counter()
        self.check(f"during the timing of the {name} block")
        out["check_s"] += _perf_counter() - t0
        times = [max(_elapsed_s(e0, e1), wall) * 1e6 / k for e0, e1, keep, wall in evs if keep]
        key = f"{name}_signed" if signed else name
        out[key] += times
        out["blocks"].append({"fn": key, "samples": len(times), "round": segment,
                              "median_us": stats.median(times) if times else None})
        return times

    def timed_check(self) -> None:
        out, runner = self.out, self.runner
        if len(_checkable(runner.outputs["cand"])) < runner.calls_per_sample:
            out["aliasing_appeared"] = True  # set up for distinct outputs
        self.api.synchronize()
        with self.acct.aside():
            check_sample(runner.outputs["cand"], self.fns, self.inputs, out)

    def run(self) -> dict:
        """Rounds of ref, cand, cand, ref on the problem's own distribution, each looked at
        by the sequential rule (sequential.py), then ref and cand on signed values. The
        checks of round 1 and of the signed blocks are one segment (timed_checks, drawn
        when round 1's sizes are known); each later round has its own (round_checks)."""
        cfg = self.cfg
        t0 = _perf_counter()
        sizes: dict[str, int] = {}
        first: dict[str, int] = {}  # round 1's block sizes (the signed blocks follow them)
        seen = None
        stop = "looks"
        for rnd in range(1, cfg.seq_looks + 1):
            seg = rnd if rnd > 1 else 0  # round 1 shares segment 0 with the signed blocks
            for b, name in enumerate(("ref", "cand", "cand", "ref")):
                self.enter(name, False)
                if name not in sizes:  # round 1: sized once its heat measured a sample
                    sizes[name] = self.size(name, cfg.block_s)
                if b == 1:
                    strata = [sizes["cand"]] * 2  # this round's two candidate blocks
                    if rnd == 1:  # ... and the signed block, which shares round 1's segment
                        strata.append(self.signed_size(sizes["cand"]))
                    self.add_plan(seg, strata, cfg.timed_checks if rnd == 1 else cfg.round_checks)
                self.by_block[name].append(self.block(name, False, sizes[name], seg))
            if rnd == 1:
                first = dict(sizes)
            seen = sequential.look(rnd, self.by_block["ref"], self.by_block["cand"],
                                   alpha=cfg.seq_alpha, looks=cfg.seq_looks,
                                   target=cfg.seq_target, iqr_k=cfg.iqr_k)
            if seen.stop:
                stop = seen.stop
                break
            left = cfg.seq_max_s - (_perf_counter() - t0 - self.out["heat_s"])
            if left <= 0:
                stop = "time"
                break
            n = {name: sum(len(b) for b in self.by_block[name]) for name in ("ref", "cand")}
            sizes = sequential.next_round(seen, n, self.cycle, cfg.seq_target, left,
                                          (cfg.block_min_samples, cfg.block_max_samples))
            if 2 * cfg.block_min_samples * sum(self.cycle.values()) > left:  # not even the least
                stop = "time"
                break
        assert seen is not None
        self.out["sequential"] = seen.record(cfg.seq_target, cfg.seq_alpha, cfg.seq_looks, stop)
        if self.inputs.checked:  # evaluator-owned values: the signed blocks mean something
            for name in ("ref", "cand"):
                self.enter(name, True)
                self.block(name, True, self.signed_size(first[name]), 0)
        return self.out


def _sustained_blocks(api: CudaApi, runner: Any, inputs: TimedInputs, fns: dict[str, SlotFn],
                      replay_s: dict[str, float], cfg: TimingConfig,
                      check: Check = _no_check, account: BlockAccount | None = None) -> dict:
    """Rounds of blocks ref, cand, cand, ref (a linear drift cancels) on values of the
    problem's own distribution until the sequential rule stops (sequential.py), then ref and
    cand on signed values (inputs.refresh(signed=True)). Before a function's block it runs
    alone, untimed, until its clock is settled, so each is measured at the clock its own
    sustained load gives. Every sample is preceded by new input values and an L2 flush. At
    random candidate samples the output is compared with a reference call on the same values.
    `account` (eager calls): the kernels of the candidate's blocks are accounted from the
    kernel log, checks aside. Returns per-call samples under "ref", "cand", "ref_signed",
    "cand_signed", with heats, heat_s, check_s (seconds in checks), blocks, checked, planned
    (checks the plan drew), mismatch, tampered and sequential (the rule's last look)."""
    return _Sustained(api, runner, inputs, fns, replay_s, cfg, check,
                      account or _NoAccount()).run()


def _steady_blocks(api: CudaApi, runner: Any, replay_s: dict[str, float],
                   cfg: TimingConfig, check: Check = _no_check,
                   account: BlockAccount | None = None) -> dict:
    """Each function in steady state, the way a program that calls it continuously (and
    triton.testing.do_bench_cudagraph) sees it: after `steady_heat_s` alone, samples back to
    back with no input refresh between them (the L2 flush stays: a short read, ~1 % of a
    sample). The refreshed blocks leave the device in memory-bound gaps that lower its
    average power, so a power-limited tensor-core kernel runs there at a higher clock than it
    sustains; here it does not. Order cand, ref. The heat runs until its clock is settled
    (at least steady_heat_s, at most heat_s) and measures what a sample costs, which sizes
    the block. Each block is looked at sequentially (up to
    seq_looks times, as sequential.py's rule): it goes on while its median's interval is wider
    than seq_target / sqrt(2), so the steady speedup's is within seq_target (a look pauses
    the device for the host's arithmetic, well under a millisecond); the extensions of one
    block last at most seq_max_s / 4. Returns per-call samples under "ref" and "cand"
    and the block summaries. `account`: as in _sustained_blocks."""
    k = runner.calls_per_sample
    out: dict[str, Any] = {"ref": [], "cand": [], "blocks": []}
    acct = account or _NoAccount()
    z = sequential.critical_z(cfg.seq_alpha, cfg.seq_looks)
    target = cfg.seq_target / math.sqrt(2.0)
    for name in ("cand", "ref"):
        acct.open()
        # at least steady_heat_s, then until its windows agree (a power-limited kernel's clock
        # falls 30-150 ms into a back-to-back run), at most heat_s
        heat, _, t = _heat(api, runner, name, max(replay_s[name], 1e-9), cfg.steady_heat_s,
                           max(heat_bounds(cfg, replay_s, runner)[1], cfg.steady_heat_s), cfg)
        cap = min(cfg.block_max_samples, max(cfg.block_min_samples, int(cfg.seq_max_s / 4 / t)))
        n = min(max(math.ceil(cfg.steady_s / t), cfg.steady_min_samples), cap)
        times: list[float] = []
        ran = 0
        for look in range(1, cfg.seq_looks + 1):
            evs: list[tuple[Any, Any, float]] = []
            for _ in range(n):
                _check_before(runner, name, check)
                evs.append(_timed_sample(api, runner, name))
            ran += n
            api.synchronize()
            got = [max(_elapsed_s(e0, e1), wall) * 1e6 / k for e0, e1, wall in evs]
            times += got
            half = z * sequential.log_median_se([times], cfg.iqr_k)
            if half <= target or look == cfg.seq_looks or len(times) >= cap:
                break
            need = math.ceil(1.2 * len(times) * (half / target) ** 2) - len(times)
            n = min(max(need, cfg.block_min_samples), cap - len(times))
        acct.close(name == "cand", Counter({"flush": heat + ran}), (heat + ran) * k)
        check(f"during the steady-state timing of the {name}")
        out[name] = times
        out["blocks"].append({"fn": f"{name}_steady", "samples": len(times), "looks": look,
                              "median_us": stats.median(times) if times else None})
    return out
