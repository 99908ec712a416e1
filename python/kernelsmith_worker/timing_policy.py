"""Timing policy: the configuration, the pure decisions (calls per sample, sample counts,
clock stability, side-stream thresholds) and the stage record. No device access here;
timing_cuda.py and timing.py measure."""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass
from typing import Callable, ContextManager, Protocol, Sequence

from . import stats

Fn = Callable[[], object]
SlotFn = Callable[[int], object]  # call j of a sample: reads input slot TimedInputs.slot(j)
Check = Callable[[str], None]  # the integrity checks, `when` for the message; raises Hacked


def _no_check(when: str) -> None:
    pass


class TimedInputs(Protocol):
    """The inputs the timed calls read, owned by the evaluator. `use(k)` makes room for a
    sample of k calls (call j reads its own slot where memory allows, so no two calls of a
    sample see the same values); `refresh(signed)` queues new values into every slot (outside any
    timed region, before each sample), so nothing a candidate remembers from one call serves
    the next; `agree(cand_out, ref_out)` says whether the candidate's output of a timed
    sample matches the reference's on the same values."""

    checked: bool  # whether agree() compares anything (timed samples worth checking)

    def use(self, k: int) -> int: ...  # returns the slots made: calls per sample <= this

    def refresh(self, signed: bool = False) -> None: ...

    def agree(self, cand_out: object, ref_out: object) -> bool: ...

    # whether the candidate called again outside the timing gave what its timed call gave
    def reproduced(self, timed: object, again: object,
                   rerun: Callable[[], object]) -> bool: ...

    # within: both functions read private copies of the values the last refresh wrote
    def pristine(self) -> ContextManager[None]: ...

    def tampered(self) -> str | None: ...  # what the candidate did to its inputs, or None


class FixedInputs:
    """TimedInputs for zero-argument functions: one slot, nothing refreshed or compared."""

    checked = False

    def use(self, k: int) -> int:
        return k

    def refresh(self, signed: bool = False) -> None:
        pass

    def agree(self, cand_out: object, ref_out: object) -> bool:
        return True

    def reproduced(self, timed: object, again: object, rerun: Callable[[], object]) -> bool:
        return True

    def pristine(self) -> ContextManager[None]:
        return contextlib.nullcontext()

    def tampered(self) -> str | None:
        return None

# Captured when the worker starts, before any candidate is imported.
_perf_counter = time.perf_counter


@dataclass(frozen=True)
class TimingConfig:
    """Every knob of the timing stage; the defaults are the evaluator's."""

    replay_target_s: float = 3e-3  # one timed sample (graph replay) of the faster fn lasts >= this
    max_calls_per_sample: int = 1000  # k cap (graph nodes per capture)
    max_replay_s: float = 0.05  # the slower fn's sample lasts <= this (k >= 1 regardless)
    max_eager_calls_per_sample: int = 100  # k cap on the events fallback
    l2_flush_factor: float = 2.0  # flush buffer = factor x L2 size
    estimate_s: float = 0.01  # eager per-call estimate runs about this long
    warmup_min_s: float = 0.1
    warmup_max_s: float = 1.0
    warmup_window_s: float = 0.02
    warmup_tol: float = 0.005  # successive windows within 0.5 %
    warmup_stable_windows: int = 2  # ... this many times in a row
    # CUDA: each function is measured in its own sustained state. A GPU's power controller
    # lowers the clock of a power-hungry kernel 30-150 ms after it starts (H100: tensor-core
    # GEMMs from ~1950 to ~1400 MHz), so short samples interleaved with a cooler reference
    # time it at a clock no program that runs it continuously gets.
    heat_s: float = 0.6  # a function runs alone, untimed, at most this long before its block
    heat_min_s: float = 0.4  # ... and at least this long, then until its windows are stable,
    #                          where a call of either function takes heat_long_call_s or more:
    #                          on a 4096^3 matmul a 0.15 s heat left the candidate's first
    #                          block after a reference block one clock step slow (1.1 %,
    #                          blocks bimodal, speedup CV 0.5-0.9 %; 0.1 % with 0.4 s)
    heat_long_call_s: float = 1e-4
    heat_short_min_s: float = 0.05  # launch-bound calls: as precise with 0.05 s as with 0.15 s
    #                                 on softmax/relu 16x16384, 25-40 % less timing time
    heat_short_s: float = 0.25  # ... and at most this long
    block_s: float = 0.05  # each block of the first round (ref, cand, cand, ref), at the
    #                        full cost of a sample: input refresh, L2 flush, replay
    block_min_samples: int = 8
    block_max_samples: int = 400
    # Sequential stopping (sequential.py): after each round a 1 - seq_alpha / seq_looks
    # interval on the speedup; stop when its relative half-width is <= seq_target
    seq_alpha: float = 0.05  # the rule's error rate (all looks together)
    seq_looks: int = 3  # rounds at most
    seq_target: float = 0.002  # relative half-width of the speedup interval
    seq_max_s: float = 1.0  # no round starts after the sustained samples ran this long
    timed_checks: int = 6  # candidate samples whose output is compared with the reference
    round_checks: int = 2  # ... and this many more in each round after the first
    signed_block_share: float = 0.5  # signed blocks last this share of block_s
    value_dependence: float = 1.2  # cand slows this much more than ref on signed values:
    #                                the signed figure is the one reported
    steady_heat_s: float = 0.1  # steady state: a function alone, back to back, untimed, at
    #                             least this long, then until settled (at most heat_s) ...
    steady_s: float = 0.05  # ... then timed this long with no input refresh between samples,
    #                         more (seq_looks looks) until its median's half-width is within
    #                         seq_target / sqrt(2) (the steady speedup's within seq_target)
    steady_min_samples: int = 40  # ... and at least this many samples (fewer than the cap
    #                               allows only): on a 4096^3 matmul the first ~25 ms of a
    #                               block after its heat ran faster, and 10-sample blocks moved
    #                               the reference's steady median by 3.5 % between evaluations
    steady_min_gap: float = 0.01  # the steady speedup replaces the checked one only when lower
    #                               than its CI by more than this: a back-to-back run steps
    #                               between speed levels ~1 % apart a few hundred ms in (an
    #                               H200: the candidate 1688 -> 1675 us after 0.4-0.65 s; an
    #                               H100: the reference 2606 or 2640-2660 us), and a short
    #                               steady block lands on either; the gaps it corrects (power-
    #                               limited tensor-core kernels) are 9-14 %
    block_drift_warn: float = 0.02  # the candidate's two blocks differ more: an info finding
    sample_budget_s: float = 0.5  # first batch of samples
    sample_max_s: float = 1.5  # total with the extension
    sample_hard_cap_s: float = 4.0  # min_samples gives way to this for very slow functions
    min_samples: int = 20
    floor_samples: int = 5
    max_samples: int = 1000
    target_rel_se: float = 0.001  # extend while the median's relative standard error is above
    wall_check_s: float = 0.02
    wall_check_repeats: int = 3  # the repeat least suspicious for the candidate is reported
    n_boot: int = 1000
    iqr_k: float = 1.5
    side_stream_reject_ratio: float = 2.0
    side_stream_reject_diff_us: float = 10.0
    side_stream_warn_ratio: float = 1.3
    side_stream_warn_diff_us: float = 5.0
    noisy_cv: float = 0.05
    cpu_warmup_calls: int = 3
    cpu_warmup_min_s: float = 0.05
    cpu_warmup_max_s: float = 0.5
    cpu_sample_target_s: float = 1e-3


# ----------------------------------------------------------------------------- pure logic


# Allowed calls per sample, ~10 steps per decade. Snapping k to this ladder gives repeated
# evaluations of one candidate the same k (the per-replay overhead amortised identically)
# unless its time straddles a step.
_K_LADDER = sorted({round(m * 10**d) for d in range(5)
                    for m in (1, 1.25, 1.6, 2, 2.5, 3.2, 4, 5, 6.4, 8)})


def choose_calls_per_sample(
    fast_s: float, slow_s: float, target_s: float, max_calls: int, max_sample_s: float
) -> int:
    """k on the ladder: the smallest with k*fast_s >= target_s, but k <= max_calls and
    k*slow_s <= max_sample_s (then the largest that fits); always >= 1."""
    fast_s = max(fast_s, 1e-9)
    want = math.ceil(target_s / fast_s - 1e-9)  # no extra call from rounding (1e-3/2e-6 > 500)
    limit = max(1, min(max_calls, int(max_sample_s / max(slow_s, 1e-9) + 1e-9)))
    fits = [k for k in _K_LADDER if k <= limit]
    up = [k for k in fits if k >= want]
    return up[0] if up else (fits[-1] if fits else 1)


def choose_sample_count(pair_s: float, cfg: TimingConfig) -> int:
    """Samples (pairs) for the first batch: the time budget, within [min, max] samples, but
    never more than the hard cap allows (at least floor_samples)."""
    pair_s = max(pair_s, 1e-9)
    n = int(cfg.sample_budget_s / pair_s)
    n = min(max(n, cfg.min_samples), cfg.max_samples)
    cap = max(cfg.floor_samples, int(cfg.sample_hard_cap_s / pair_s))
    return min(n, cap)


def extra_samples(n: int, rel_se: float, pair_s: float, time_left_s: float, cfg: TimingConfig) -> int:
    """How many more samples bring rel_se down to target (se ~ 1/sqrt(n)), bounded by the time
    left and max_samples; 0 when precise enough or when fewer than 10 would be added."""
    if not math.isfinite(rel_se) or rel_se <= cfg.target_rel_se:
        return 0
    need = math.ceil(n * (rel_se / cfg.target_rel_se) ** 2) - n
    extra = min(need, cfg.max_samples - n, int(max(time_left_s, 0.0) / max(pair_s, 1e-9)))
    return extra if extra >= 10 else 0


def is_stable(windows: Sequence[float], tol: float, count: int) -> bool:
    """True when the last `count` successive window pairs each differ by <= tol (relative)."""
    if len(windows) < count + 1:
        return False
    tail = windows[-(count + 1):]
    return all(b > 0 and abs(a / b - 1.0) <= tol for a, b in zip(tail[1:], tail[:-1]))


def side_stream_finding(event_us: float, wall_us: float, cfg: TimingConfig) -> dict | None:
    """A finding when the host clock around a device-wide sync sees much more time per call
    than events on the current stream: work escapes the timed stream. Both a ratio and an
    absolute gap are required, so launch-bound tiny kernels (where both clocks see the host's
    launch time) and sync latency never trigger it."""
    ratio = wall_us / event_us if event_us > 0 else math.inf
    diff = wall_us - event_us
    detail = (
        f"host wall time with a device-wide sync is {wall_us:.1f} us/call but CUDA events on "
        f"the current stream see {event_us:.1f} us/call (x{ratio:.2f}): work runs outside the "
        "stream being timed (side stream or thread) and would not be measured"
    )
    if ratio >= cfg.side_stream_reject_ratio and diff >= cfg.side_stream_reject_diff_us:
        return {"kind": "side_stream", "detail": detail, "severity": "reject"}
    if ratio >= cfg.side_stream_warn_ratio and diff >= cfg.side_stream_warn_diff_us:
        return {"kind": "side_stream", "detail": detail, "severity": "warn"}
    return None


def build_record(
    method: str, k: int, ref_us: Sequence[float], cand_us: Sequence[float], *, seed: int,
    cfg: TimingConfig, paired: bool = True,
) -> dict:
    """The statistics part of the timing record from per-call samples in microseconds
    (paired: ref_us[i] and cand_us[i] were measured together)."""
    rs = stats.summarize(ref_us, cfg.iqr_k)
    cs = stats.summarize(cand_us, cfg.iqr_k)
    speedup = rs["median"] / cs["median"] if cs["median"] > 0 else None
    lo, hi = stats.bootstrap_ratio_ci(
        ref_us, cand_us, seed=seed, num_mask=rs["mask"], den_mask=cs["mask"], n_boot=cfg.n_boot,
        paired=paired)
    findings = []
    for name, s in (("reference", rs), ("candidate", cs)):
        if s["cv"] > cfg.noisy_cv:
            findings.append({
                "kind": "noisy_timing",
                "detail": f"{name} samples vary by CV {100 * s['cv']:.1f} % after outlier "
                          "removal: the timing is unreliable",
                "severity": "warn",
            })
    return {
        "ok": True, "method": method, "calls_per_sample": k, "samples": len(ref_us),
        "samples_cand": len(cand_us),
        "kept_ref": rs["kept"], "kept_cand": cs["kept"],
        "ref_us": rs["median"], "cand_us": cs["median"],
        "ref_cv": rs["cv"], "cand_cv": cs["cv"],
        "speedup": speedup,
        "speedup_ci95": [lo, hi] if math.isfinite(lo) and math.isfinite(hi) else None,
        "findings": findings,
    }


def _adaptive_samples(
    collect: Callable[[int, int], tuple[list[float], list[float]]], pair_s: float,
    cfg: TimingConfig,
) -> tuple[list[float], list[float]]:
    """First batch from the budget, then at most one extension while the medians are not
    precise enough. collect(n, start) returns n more (ref, cand) per-call samples."""
    t0 = _perf_counter()
    n0 = choose_sample_count(pair_s, cfg)
    ref, cand = collect(n0, 0)
    elapsed = _perf_counter() - t0
    if len(ref) >= 2:
        pair_s = max(elapsed / len(ref), 1e-9)  # measured, includes host overheads
    rse = max(stats.summarize(ref, cfg.iqr_k)["rel_se"], stats.summarize(cand, cfg.iqr_k)["rel_se"])
    more = extra_samples(len(ref), rse, pair_s, cfg.sample_max_s - elapsed, cfg)
    if more:
        r2, c2 = collect(more, len(ref))
        ref += r2
        cand += c2
    return ref, cand


# ----------------------------------------------------------------------------- CUDA seam


def timed_check_findings(tampered: str | None, mismatch: bool,
                         unreproduced: bool = False) -> list[dict]:
    """The rejects of the timed checks: the candidate wrote or re-seated its timed inputs
    (`tampered` says how), a checked timed output did not match the reference, or the
    candidate called again on the same values outside the timing gave another output."""
    found = []
    if tampered:
        found.append({
            "kind": "timed_input_modified",
            "detail": f"during timing {tampered}: forward must not write, re-seat or "
                      "re-stride its inputs (the reference reads the same memory)",
            "severity": "reject",
        })
    if mismatch:
        found.append({
            "kind": "timed_output_mismatch",
            "detail": "the output of a timed sample (new input values, chosen at random "
                      "among the timed samples) does not match the reference on the same "
                      "values, or is several times less precise than in the correctness "
                      "trials or than bf16 rounding of the inputs makes the reference: the "
                      "candidate computes something else while it is timed",
            "severity": "reject",
        })
    if unreproduced:
        found.append({
            "kind": "timed_output_unreproduced",
            "detail": "the output of a timed call differs from the candidate's own output on "
                      "the same values called outside the timing by more than rounding order "
                      "explains (more than its run-to-run difference): the candidate computes "
                      "something else while it is timed",
            "severity": "reject",
        })
    return found
