"""Timing stage: the reference and the candidate measured interleaved, in the same process.

`time_pair(ref_fn, cand_fn, device=..., seed=...)` returns the `timing` stage record of
docs/eval-result.md. On CUDA (method `cuda_graph`):

1. warm-up calls on the current stream and on a side stream (lazy init, Triton autotune and
   cuBLAS handles happen outside any capture); per-call eager times estimated with events;
2. one CUDA graph of k calls per function, captured on the side stream, with k chosen so
   the faster function's replay lasts >= `replay_target_s` (and the slower one's at most
   `max_replay_s`); each graph is checked to rewrite the output it returned at capture
   (output poisoned, graph replayed, compared with an eager call). If a capture fails or a
   graph does not reproduce its output, both functions are timed instead with events around
   k eager calls and a device-wide synchronize per sample (method `cuda_events`, with
   `fallback_reason`);
3. sustained blocks in rounds of ref, cand, cand, ref (timing_blocks.py): before a function's
   block it runs alone until its clock is settled (successive windows agree within
   `warmup_tol`, between `heat_min_s` and `heat_s`); each sample: new input values, L2 flush
   (a read of 2x the L2 size, outside the timed region), one timed replay; random candidate
   samples checked against the reference. After each round the sequential rule
   (sequential.py) looks at the speedup's interval: it stops when the interval is within
   `seq_target` (error rate `seq_alpha` over all `seq_looks` looks) and otherwise sizes the
   next round where the noise is. Then both functions on signed values;
4. steady-state blocks: each function back to back without input refresh, extended until
   its median is as precise; reported when lower than the checked figure's CI;
5. statistics: IQR (1.5x) outliers dropped per series, medians, CVs, bootstrap CI of
   the speedup (seeded; unpaired on CUDA, where the series come from separate blocks);
6. wall check: k eager candidate calls timed by events on the current stream and by the host
   clock around a device-wide synchronize. Work that escapes the current stream (side streams,
   threads) shows as wall >> events and yields a `side_stream` finding.

`phases_s` in the record: the stage's seconds per phase.

On the CPU (method `cpu_wall`): ref/cand samples interleaved pair by pair, which goes first
alternating; each sample reads input slots refreshed before it (one per call) and one in
CPU_CHECK_ONE_IN candidate samples is checked against the reference on the same values; the
sample count follows a time budget and is extended once when the medians are not yet precise
enough (`_adaptive_samples`); the same statistics; on time.perf_counter,
captured at import so a candidate patching it changes nothing.
"""

from __future__ import annotations

import gc
import time
import traceback

import torch

from . import malloc_state, stats
from .inputs import clone_args
from .timing_blocks import _disjoint, _random_below, check_sample
from .timing_runners import _aliasing_appeared_finding
from .timing_cuda import CudaApi, _graph_reproduces, _time_cuda  # noqa: F401 - re-exported
from .cpu_account import CpuAccount
from .findings import Hacked
from .timing_policy import (Check, Fn, FixedInputs, SlotFn, TimedInputs, TimingConfig,  # noqa: F401
                            _adaptive_samples, build_record, choose_calls_per_sample,
                            _no_check, choose_sample_count, extra_samples, is_stable,
                            side_stream_finding, timed_check_findings)

# Captured when the worker starts, before any candidate is imported.
_perf_counter = time.perf_counter
_thread_time = time.thread_time


CPU_CHECK_ONE_IN = 4  # CPU timing: each candidate sample checked with this chance (1/n)
_ALIASED_CPU = {
    "kind": "aliased_outputs",
    "detail": "the outputs of forward's successive calls share memory, so only the last call "
              "of a sample could be checked: one call of each sample, at random, has its output "
              "copied as it returns (on both sides, inside the timed window) and is the one "
              "checked. Return a fresh output per call",
    "severity": "info"}


def cpu_sample(fn: SlotFn, inputs: TimedInputs, k: int, account: CpuAccount | None = None,
               side: str = "ref", keep: int | None = None) -> tuple[float, float, list[object]]:
    """One CPU sample: new values in the slots, then k calls timed by the host clock, the
    last call first (call j reads slot j). Returns (microseconds a call, CPU microseconds
    of this thread a call, each call's output). The thread's CPU time (outside the host
    clock's reads) does not grow when other processes take the core. `account`: the
    process's CPU time per wall second, counted for `side`. The C heap's tunables are
    pinned first (malloc_state.py): what a candidate's call set does not outlast its sample.
    `keep`: the call whose output is copied as it returns (inside the timed window), for
    functions whose calls return one buffer."""
    inputs.refresh()
    malloc_state.pin()
    outs: list[object] = [None] * k
    if account is not None:
        account.start()
    c = _thread_time()
    a = _perf_counter()
    for j in range(k - 1, -1, -1):
        outs[j] = fn(j)
        if j == keep:
            outs[j] = clone_args(outs[j])
    b = _perf_counter()
    cpu = _thread_time() - c
    if account is not None:
        account.stop(side)
    return (b - a) * 1e6 / k, cpu * 1e6 / k, outs


def _time_cpu(ref_slot: SlotFn, cand_slot: SlotFn, inputs: TimedInputs, seed: int,
              cfg: TimingConfig) -> dict:
    """Warm-up on slot 0; then every sample reads freshly refreshed slots (one per call, the
    last call first, like a CUDA sample) and random candidate samples are checked against
    the reference on the same values (timed_check_findings)."""
    fns = {"ref": ref_slot, "cand": cand_slot}
    warm: dict[str, list[float]] = {"ref": [], "cand": []}
    got = {"checked": 0, "mismatch": False, "unreproduced": False, "tampered": None,
           "aliasing_appeared": False}
    inputs.use(1)
    t0 = _perf_counter()
    while True:
        for name, fn in fns.items():
            a = _perf_counter()
            fn(0)
            warm[name].append(_perf_counter() - a)
        elapsed = _perf_counter() - t0
        if len(warm["ref"]) >= cfg.cpu_warmup_calls and elapsed >= cfg.cpu_warmup_min_s:
            break
        if elapsed >= cfg.cpu_warmup_max_s:
            break
    est = {name: max(stats.median(v[len(v) // 2:]), 1e-9) for name, v in warm.items()}
    k = choose_calls_per_sample(min(est.values()), max(est.values()), cfg.cpu_sample_target_s,
                                cfg.max_calls_per_sample, cfg.max_replay_s)
    k = max(1, min(k, inputs.use(k)))
    # outputs sharing memory across calls: a sample's last call would be the only one left to
    # check, so one call of each sample, at random, has its output copied as it returns, on
    # both sides alike (one call a sample, as the CUDA timing does, made samples so short
    # that the CPU account's own reads counted as threads), and that call is the one checked
    # Two probe samples: the slots are fixed allocations, so the second reads addresses the
    # first already showed (a function that returns one buffer for an address it has seen
    # shares memory only from its second sample on)
    aliased = k > 1 and not all(_disjoint(cpu_sample(cand_slot, inputs, k)[2])
                                for _ in range(2))

    ref_cpu: list[float] = []  # the reference's CPU time a call (ref_alone.py reads it)
    account = CpuAccount()  # CPU time per wall second of each side's samples
    # two checks at random among the first floor_samples candidate samples (there are always
    # that many), then each sample with chance 1/CPU_CHECK_ONE_IN: never a run unchecked
    n = max(cfg.floor_samples, 1)
    first = _random_below(n)
    planned = {first, (first + 1 + _random_below(n - 1)) % n} if n > 1 else {first}
    seen = [0]

    def one(fn: SlotFn) -> float:
        keep = _random_below(k) if aliased else None  # call 0 (run last) too
        took, cpu, outs = cpu_sample(fn, inputs, k, account, "cand" if fn is cand_slot else "ref",
                                     keep)
        if fn is ref_slot:
            ref_cpu.append(cpu)
        if fn is cand_slot:
            if inputs.checked and (seen[0] in planned or _random_below(CPU_CHECK_ONE_IN) == 0):
                got["aliasing_appeared"] = got["aliasing_appeared"] or (
                    not aliased and not _disjoint(outs))
                check_sample(outs, fns, inputs, got, [keep] if keep is not None else None)
            seen[0] += 1
        return took

    def collect(n: int, start: int) -> tuple[list[float], list[float]]:
        ref, cand = [], []
        for i in range(n):
            if (start + i) % 2 == 0:
                ref.append(one(ref_slot))
                cand.append(one(cand_slot))
            else:
                cand.append(one(cand_slot))
                ref.append(one(ref_slot))
        return ref, cand

    ref_us, cand_us = _adaptive_samples(collect, k * (est["ref"] + est["cand"]), cfg)
    rec = build_record("cpu_wall", k, ref_us, cand_us, seed=seed, cfg=cfg)
    got["tampered"] = got["tampered"] or inputs.tampered()
    rec.update({
        "ref_eager_us": None, "l2_flush": False, "warmup_s": elapsed, "wall_check": None,
        "fallback_reason": None, "timed_checks": got["checked"],
        "threads": torch.get_num_threads(),  # both sides: torch intra-op and OpenMP threads
        "ref_cpu_us": stats.median(ref_cpu),
    })
    rec.update(account.record(rec["threads"]))
    rec["retime_for_threads"] = account.near_budget(rec["threads"])
    rec["findings"] = rec.get("findings", []) + timed_check_findings(
        got["tampered"], got["mismatch"], got["unreproduced"])
    rec["findings"] += [_ALIASED_CPU] if aliased else []
    rec["findings"] += [_aliasing_appeared_finding()] if got["aliasing_appeared"] else []
    rec["findings"] += account.findings(rec["threads"])
    return rec


# ----------------------------------------------------------------------------- entry point


def _only_threads_rejected(rec: dict) -> bool:
    """Whether cpu_threads_over_budget is the record's only reject finding."""
    rejects = {f["kind"] for f in rec["findings"] if f.get("severity") == "reject"}
    return rejects == {"cpu_threads_over_budget"}


def _plain_outputs(fn: SlotFn, who: str) -> SlotFn:
    """fn, whose every output must be a plain torch.Tensor (or a tuple/list of them, or no
    tensor at all), as the correctness trials require: a Tensor subclass's __torch_function__
    can answer the timing stage's comparisons (out - ref, isfinite, isclose) with whatever
    it likes, and a subclass returned only while timed would pass every timed check. Both
    functions are wrapped alike, so the check costs both sides the same."""
    tensor = torch.Tensor

    def call(j: int) -> object:
        out = fn(j)
        if type(out) is not tensor and (
                isinstance(out, tensor) or isinstance(out, (tuple, list)) and any(
                    isinstance(t, tensor) and type(t) is not tensor for t in out)):
            raise Hacked([{
                "kind": "timed_output_type",
                "detail": f"while timed, the {who} returned a {_type_name(out)}: timed calls "
                          "must return plain torch.Tensor outputs, as in the correctness "
                          "trials",
                "severity": "reject"}])
        return out
    return call


def _type_name(out: object) -> str:
    inner = [t for t in out if type(t) is not torch.Tensor] if isinstance(out, (tuple, list)) \
        else [out]
    t = type(inner[0]) if inner else type(out)
    return f"{t.__module__}.{t.__qualname__}"



def time_pair(
    ref_fn: Fn | SlotFn, cand_fn: Fn | SlotFn, *, device: torch.device | str, seed: int,
    config: TimingConfig | None = None, cuda_api: CudaApi | None = None,
    inputs: TimedInputs | None = None, check: Check | None = None,
    reference_kernels: frozenset[str] | None = None,
) -> dict:
    """Time ref_fn against cand_fn (zero-argument closures calling forward on fixed inputs)
    and return the `timing` stage record of docs/eval-result.md: ok, method, calls_per_sample,
    samples, kept_ref, kept_cand, ref_us, cand_us, ref_cv, cand_cv, speedup, speedup_ci95,
    ref_eager_us, l2_flush, warmup_s, wall_check, fallback_reason, duration_s, findings.

    With `inputs` (TimedInputs), ref_fn and cand_fn take the call's index j within a sample
    and read input slot j: every timed call sees values no earlier call saw, and sampled
    timed outputs are compared (CUDA). Without it they take no argument.

    `check(when)` (CUDA) runs the evaluator's integrity checks between samples, where no
    candidate code runs: before the reference's graph is captured, before each eager
    reference sample and at the end of every block. A patch the candidate made to slow the
    reference or to fake the clock is live there; what it raises (Hacked) propagates.

    On failure (a function raised, CUDA error) returns ok=False with `error` and `traceback`;
    the caller decides whether the worker is poisoned. `cuda_api` is a test-only seam: a fake
    CudaApi drives the CUDA path without a GPU.

    `reference_kernels` (CUDA): the names of what ref_fn ran on the device before any
    candidate code was imported; the reference's eager blocks are then read for work that is
    neither its own nor the evaluator's (timed_account.BlockAccount).
    """
    cfg = config or TimingConfig()
    device = torch.device(device)
    if inputs is None:
        inputs = FixedInputs()
        ref_slot: SlotFn = lambda j, f=ref_fn: f()  # noqa: E731
        cand_slot: SlotFn = lambda j, f=cand_fn: f()  # noqa: E731
    else:
        ref_slot, cand_slot = ref_fn, cand_fn
    ref_slot = _plain_outputs(ref_slot, "reference")
    cand_slot = _plain_outputs(cand_slot, "candidate")
    t0 = _perf_counter()
    # A collection before timing; the collector stays as it is everywhere else (a switch that
    # only the timing stage flipped would tell the candidate that it is being timed). A pause
    # inside a timed region is an outlier the statistics drop.
    gc.collect()
    gc_s = _perf_counter() - t0
    try:
        with torch.no_grad():
            if device.type == "cuda":
                rec = _time_cuda(ref_slot, cand_slot, cuda_api or CudaApi(device), seed, cfg,
                                 inputs, check or _no_check, reference_kernels)
            elif device.type == "cpu":
                rec = _time_cpu(ref_slot, cand_slot, inputs, seed, cfg)
                if rec.pop("retime_for_threads") and _only_threads_rejected(rec):
                    # demand just over the budget: a second timing, judged and reported
                    first = rec["cand_threads_demanded"]
                    rec = _time_cpu(ref_slot, cand_slot, inputs, seed + 1, cfg)
                    rec.pop("retime_for_threads")
                    rec["first_threads_demanded"] = first
            else:
                raise ValueError(f"timing: unsupported device type {device.type!r}")
    except Hacked:
        raise
    except Exception as e:
        rec = {
            "ok": False, "method": None, "error": f"{type(e).__name__}: {e}"[:2000],
            "traceback": traceback.format_exc()[-4000:], "findings": [],
        }
    rec["duration_s"] = _perf_counter() - t0
    if "phases_s" in rec:
        rec["phases_s"]["gc"] = round(gc_s, 6)  # the collection before timing
    return rec
