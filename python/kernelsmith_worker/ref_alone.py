"""The reference timed alone before any candidate code is imported, and compared with its
figure in the timing stage.

A candidate can make the reference slower instead of making itself faster, by changing
process-wide state the integrity checks do not enumerate: glibc's malloc tunables (mallopt),
the floating-point control register (denormals), transparent huge pages, thread affinity,
OpenMP settings, CUDA device limits, allocator settings, L2 persistence windows... That family
has no end, so no state is listed here. In the load stage, before the candidate is imported,
`time_alone` measures the reference on timed inputs made like the timing stage's (the same
fresh draws, refreshed before every sample) with the timing stage's own kind of sample: on
the CPU k calls on the host clock and the thread's CPU time; on CUDA graph replays of k
calls after a heat (the clock the reference's own sustained load gives) and an L2 flush, and
eager samples of k calls and a device-wide synchronize (the timing stage's fallback when a
graph cannot be used). After the timing stage `compare` puts the reference's figure there
(CUDA: its sustained blocks on its own distribution; CPU: the thread's CPU time, which other
processes sharing the core do not raise) beside the figure alone. More than SLOWED_RATIO
times slower, the reference is timed alone again at once (CONFIRM_REPEATS times), still under
the lease, and when their median is still more than CONFIRM_RATIO slower (`confirm`), it is
the reject finding `reference_slowed`, whatever the cause; the worker is replaced (the state
outlives the request). The second measurement tells a state change, which persists, from a
passing load of the machine during the timing stage; it costs nothing where the first check
passes. A load that lasts (other processes sharing the GPU) would read as a state change, so
each CUDA measurement also times a plain device copy (`probe_us`: preallocated buffers larger
than L2, which no state of this process slows; on an H200 of its own 122 us within 2 %);
when the copy's slowest time among the measurements is more than CONTENDED_RATIO times its
fastest, the device is shared and the slowdown is not judged (the warning
`device_contended`).

The timing stage chooses k from both functions, so its k is not known before the import. A
sample of k calls costs about T(k) = a + b k: a, what a sample costs whatever its length (a
graph launch, a synchronize, the host clock's reads), b a call. Per method the measurement
keeps the median sample at the k the reference alone gets and, when that is more than one,
at k = 1; the figure alone at the timing stage's k is T(k) / k on the line through them. For a
launch-bound reference that is what keeps a slow candidate's small k (a large share of `a` a
call) from reading as a slowed reference.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import torch

from . import errors, stats
from .timing import _plain_outputs, cpu_sample
from .timing_blocks import _elapsed_s, _heat, _timed_sample, heat_bounds
from .timing_cuda import CudaApi, _capture, _eager_per_call_s, _replay_s
from .timing_policy import SlotFn, TimedInputs, TimingConfig, choose_calls_per_sample
from .timing_runners import _EagerRunner, _GraphRunner

# Captured when the worker starts, before any candidate is imported.
_perf_counter = time.perf_counter
_no_grad = torch.no_grad

# The reference in the timing stage may take this many times its time alone (docs/
# evaluation.md, "Timing", has the measurements). CUDA: each sample after an L2 flush, each
# function heated to its own clock: the short block alone, the clock's steps and the
# device's caching allocator stay well inside 1.3. CPU: up to 1.5x for honest candidates,
# since the reference's large outputs land on fresh pages (page faults) more often when
# another function's samples and input refreshes run between its own (glibc's heap layout);
# the malloc-tunables cheat made it 2.2-3.7x.
SLOWED_RATIO = {"cuda": 1.3, "cpu": 1.8}
# ... and then, timed alone again right after the timing stage (the median of
# CONFIRM_REPEATS measurements), more than this: the slowdown persists (a state change), it
# was not a passing load of the machine. Honest evaluations measured 1.12-1.15x on the CPU
# (heap layout); the malloc-tunables cheat's page faults cost what the VM makes of them,
# and one measurement in five or so showed none of it.
CONFIRM_RATIO = 1.2
CONFIRM_REPEATS = 3
# A figure must be slower by at least this many microseconds a call (launch-bound
# references: a microsecond of host or launch jitter is no state change).
SLOWED_FLOOR_US = 1.0
# The device copy timed with each CUDA measurement: PROBE_SAMPLES samples of copies of
# max(4 x L2, PROBE_MIN_BYTES), each as long as a timed sample; varying by more than
# CONTENDED_RATIO among the measurements, the device is shared with other work and a slowed
# reference is not judged.
PROBE_SAMPLES = 8
PROBE_MIN_BYTES = 64 << 20
CONTENDED_RATIO = 1.1
CPU_WARMUP_S = 0.02  # CPU: calls on slot 0 (at least cpu_warmup_calls) for the estimate
CPU_BLOCK_S = 0.05  # the CPU's samples at the reference's own k: at least this long ...
MIN_SAMPLES = 8  # ... and at least this many samples (each block, each method)
MAX_BLOCK_S = 0.3  # a block stops here with 3 samples (long calls, or input refreshes of
#                    many large slots: a refresh writes every slot the k calls read)
ONE_CALL_SAMPLES = 16  # the samples of one call (k = 1): short, many for a stable median


def time_alone(ref_fn: SlotFn, *, device: torch.device | str, inputs: TimedInputs,
               config: TimingConfig | None = None, cuda_api: CudaApi | None = None) -> dict:
    """The reference alone: {"points": {method: [[k, us a sample], ...]}, "duration_s"}, the
    median microseconds of a sample of k calls per timing method ("cpu_wall"; "cuda_graph"
    when the reference can be captured, and "cuda_events"), k ascending; on CUDA also
    "probe_us", the device copy's microseconds (`probe_us`). `ref_fn(j)` calls the reference
    on input slot j of `inputs`. What the reference raises propagates."""
    cfg = config or TimingConfig()
    device = torch.device(device)
    ref = _plain_outputs(ref_fn, "reference")
    t0 = _perf_counter()
    out: dict[str, Any] = {}
    with _no_grad():
        if device.type == "cuda":
            api = cuda_api or CudaApi(device)
            out["points"] = _cuda(ref, api, inputs, cfg)
            out["probe_us"] = probe_us(api, cfg.replay_target_s)
        elif device.type == "cpu":
            out["points"] = {"cpu_wall": _cpu(ref, inputs, cfg)}
        else:
            raise ValueError(f"timing: unsupported device type {device.type!r}")
    out["duration_s"] = round(_perf_counter() - t0, 6)
    return out


def probe_us(api: CudaApi, sample_s: float) -> float:
    """Microseconds a device copy of max(4 x L2, PROBE_MIN_BYTES) between preallocated
    buffers takes (CudaApi.copy_probe): the median of PROBE_SAMPLES samples of back-to-back
    copies lasting about `sample_s` (the timing stage's sample: a share of the device that
    other contexts take shows in samples of that length as it does in the reference's)."""
    def sample(n: int) -> float:
        e0, e1 = api.event(), api.event()
        e0.record()
        for _ in range(n):
            probe()
        e1.record()
        api.synchronize()
        return _elapsed_s(e0, e1) * 1e6 / n

    with api.device_ctx():
        probe = api.copy_probe(max(4 * api.l2_bytes(), PROBE_MIN_BYTES))
        one = stats.median([sample(1) for _ in range(3)])  # the first touches the buffers
        n = max(1, min(1000, math.ceil(sample_s * 1e6 / max(one, 1e-3))))
        got = stats.median([sample(n) for _ in range(PROBE_SAMPLES)])
        del probe
        api.empty_cache()
    return got


def _block(sample: Any, n_min: int, seconds: float, n_max: int) -> list[float]:
    """Per column, the median of sample()'s figures (microseconds) over at least n_min samples
    and `seconds`, at most n_max samples (and MAX_BLOCK_S, once 3 were taken)."""
    got: list[tuple[float, ...]] = []
    t0 = _perf_counter()
    while len(got) < n_max:
        elapsed = _perf_counter() - t0
        if len(got) >= n_min and elapsed >= seconds or len(got) >= 3 and elapsed >= MAX_BLOCK_S:
            break
        got.append(sample())
    return [stats.median(list(col)) for col in zip(*got)]


def _cpu(ref: SlotFn, inputs: TimedInputs, cfg: TimingConfig) -> list[list[float]]:
    """As the CPU timing stage: warm-up calls on slot 0, k from the per-call estimate, every
    sample on newly refreshed slots. Points [k, us, CPU us] (this thread's CPU time). The
    one-call samples keep the k slots, so each follows a refresh of all of them: the caches
    as cold as another function's sample leaves them in the timing stage (with one slot,
    a reference after a Triton-interpreted candidate measured 1.36x its one-call time)."""
    inputs.use(1)
    warm: list[float] = []
    t0 = _perf_counter()
    while True:
        a = _perf_counter()
        ref(0)
        warm.append(_perf_counter() - a)
        elapsed = _perf_counter() - t0
        if len(warm) >= cfg.cpu_warmup_calls and elapsed >= CPU_WARMUP_S or \
                elapsed >= cfg.cpu_warmup_max_s:
            break
    est = max(stats.median(warm[len(warm) // 2:]), 1e-9)
    k = choose_calls_per_sample(est, est, cfg.cpu_sample_target_s, cfg.max_calls_per_sample,
                                cfg.max_replay_s)
    k = max(1, min(k, inputs.use(k)))

    def sample(n: int) -> tuple[float, float]:
        wall, cpu, _ = cpu_sample(ref, inputs, n)
        return wall * n, cpu * n
    points = [[k, *_block(lambda: sample(k), MIN_SAMPLES, CPU_BLOCK_S, cfg.block_max_samples)]]
    if k > 1:
        points.insert(0, [1, *_block(lambda: sample(1), ONE_CALL_SAMPLES, 0.0,
                                     ONE_CALL_SAMPLES)])
    return points


def _cuda(ref: SlotFn, api: CudaApi, inputs: TimedInputs, cfg: TimingConfig
          ) -> dict[str, list[list[float]]]:
    """As the CUDA timing stage: warm-up calls on the current and a side stream, the eager
    estimate, a graph of k calls (k from the estimate, raised once when the replay came out
    short), a heat, then samples each after new input values and an L2 flush. Graph replays
    are timed with the kernel log paused, as in the timing stage."""
    call0 = lambda: ref(0)  # noqa: E731
    points: dict[str, list[list[float]]] = {}
    with api.device_ctx():
        main, side = api.current_stream(), api.new_stream()
        call0()
        call0()
        side.wait_stream(main)
        with api.use_stream(side):
            call0()
            call0()
        main.wait_stream(side)
        api.synchronize()
        eager_s = _eager_per_call_s(api, call0, cfg)
        flush = api.l2_flusher(int(max(api.l2_bytes(), 1 << 20) * cfg.l2_flush_factor))
        k_e = choose_calls_per_sample(eager_s, eager_s, cfg.replay_target_s,
                                      cfg.max_eager_calls_per_sample, cfg.max_replay_s)
        graphs, k_g, replay, slots = _graphs(api, ref, eager_s, k_e, side, inputs, cfg)
        k_e = min(k_e, slots)
        heated = False
        try:
            if graphs:
                with api.log_paused():
                    runner = _GraphRunner({"ref": graphs[k_g][0]}, k_g, flush,
                                          {"ref": graphs[k_g][1]})
                    points["cuda_graph"] = _cuda_points(api, runner, inputs, replay, cfg, (
                        _GraphRunner({"ref": graphs[1][0]}, 1, flush, {"ref": graphs[1][1]})
                        if k_g > 1 else None))
                    heated = True
        finally:
            for g, _ in graphs.values():
                g.reset()
        eager = _EagerRunner(api, {"ref": ref}, k_e, flush)
        points["cuda_events"] = _cuda_points(
            api, eager, inputs, k_e * eager_s + 1e-4, cfg,
            _EagerRunner(api, {"ref": ref}, 1, flush) if k_e > 1 else None, heat=not heated)
        eager.close()
        del flush
        api.synchronize()
        api.empty_cache()
    return points


def _graphs(api: CudaApi, ref: SlotFn, eager_s: float, k_eager: int, side: Any,
            inputs: TimedInputs, cfg: TimingConfig
            ) -> tuple[dict[int, tuple[Any, list[object]]], int, float, int]:
    """Graphs of the reference by calls per graph: k (as the timing stage chooses it for a
    reference alone) and 1; k; the replay's seconds; the input slots made, for k and for
    eager samples of k_eager calls (made before the captures: new slots would leave the
    graphs reading freed memory). No graphs when the reference cannot be captured (the
    timing stage then times both functions with eager calls)."""
    k = choose_calls_per_sample(eager_s, eager_s, cfg.replay_target_s, cfg.max_calls_per_sample,
                                cfg.max_replay_s)
    graphs: dict[int, tuple[Any, list[object]]] = {}
    slots = 1
    try:
        for attempt in range(2):
            for g, _ in graphs.values():
                g.reset()
            graphs = {}
            slots = inputs.use(max(k, k_eager))
            k = min(k, slots)
            graphs = {k: _capture(api, ref, k, side)}
            api.synchronize()
            replay = _replay_s(api, graphs[k][0])
            k2 = choose_calls_per_sample(replay / k, replay / k, cfg.replay_target_s,
                                         cfg.max_calls_per_sample, cfg.max_replay_s)
            # eager estimates of launch-bound calls overstate device time: k was too small
            if attempt == 0 and replay < 0.5 * cfg.replay_target_s and k2 > k:
                k = k2
                continue
            break
        if k > 1:
            graphs[1] = _capture(api, ref, 1, side)
        api.synchronize()
    except Exception:  # noqa: BLE001 - not capturable: the eager figures stand alone
        for g, _ in graphs.values():
            g.reset()
        api.synchronize()
        return {}, 0, 0.0, inputs.use(max(k_eager, 1))
    return graphs, k, replay, slots


def _cuda_points(api: CudaApi, runner: Any, inputs: TimedInputs, sample_s: float,
                 cfg: TimingConfig, one: Any = None, heat: bool = True) -> list[list[float]]:
    """[[1, us], [k, us]] (the first when `one`, a runner of one call, is given): a heat of
    `runner` (the timing stage's bounds) unless `heat` is off, then a block of its samples
    (block_s, at least MIN_SAMPLES), then ONE_CALL_SAMPLES samples of `one`."""
    cycle = max(sample_s, 1e-9)
    if heat:
        lo, hi = heat_bounds(cfg, {"ref": sample_s}, runner)
        _, _, cycle = _heat(api, runner, "ref", cycle, lo, hi, cfg, inputs.refresh)
    n = min(max(math.ceil(cfg.block_s / cycle), MIN_SAMPLES), cfg.block_max_samples)
    points = [[runner.calls_per_sample, _cuda_block(api, runner, inputs, n)]]
    if one is not None:
        points.insert(0, [1, _cuda_block(api, one, inputs, ONE_CALL_SAMPLES)])
    return points


def _cuda_block(api: CudaApi, runner: Any, inputs: TimedInputs, n: int) -> float:
    """Median microseconds of n samples, each after new input values (and the runner's L2
    flush): events around it, and for eager calls the host clock across device-wide
    synchronizes (the larger counts), as the timing stage's blocks."""
    evs = []
    for _ in range(n):
        inputs.refresh()
        evs.append(_timed_sample(api, runner, "ref"))
    api.synchronize()
    return stats.median([max(_elapsed_s(e0, e1), wall) * 1e6 for e0, e1, wall in evs])


def alone_us(alone: dict, method: str, k: int, column: int = 1) -> float | None:
    """The reference's microseconds a call alone for a sample of k calls timed by `method`
    (`column` 2: the CPU's thread CPU time): T(k) / k on the line T = a + b k through the
    measured samples (a, b >= 0); with one point, its time a call. None when that method
    was not measured."""
    points = (alone.get("points") or {}).get(method)
    if not points or len(points[0]) <= column:
        return None
    (k0, t0), (k1, t1) = (points[0][0], points[0][column]), (points[-1][0], points[-1][column])
    if k1 == k0:
        return t1 / k1
    b = max((t1 - t0) / (k1 - k0), 0.0)
    a = max(t0 - b * k0, 0.0)
    return (a + b * k) / k


def _figures(timing: dict) -> list[tuple[str, float | None, int]]:
    """(name, the reference's microseconds a call in the timing stage, column of the points
    alone) of the figures compared: on the CPU the thread's CPU time, which other processes
    taking the core do not raise (the host clock does: on a shared machine a load during the
    short measurement alone hid a 2.1x slowdown); on CUDA the sustained blocks on the
    problem's own distribution (`ref_own_us`), whichever figure is reported."""
    if timing.get("method") == "cpu_wall":
        return [("cpu", timing.get("ref_cpu_us"), 2)]
    return [("device", timing.get("ref_own_us", timing.get("ref_us")), 1)]


def _slowdown(before: dict, method: str, k: int,
              figures: list[tuple[str, float | None, int]]) -> tuple[float | None, dict]:
    """The least ratio of `figures` (name, us, column) to the reference alone `before`
    (None when one cannot be compared) and, per figure, {alone_us, us, ratio}. A figure
    slower by less than SLOWED_FLOOR_US counts as ratio 1."""
    least: float | None = None
    per: dict[str, dict[str, float | None]] = {}
    for name, us, column in figures:
        base = alone_us(before, method, k, column)
        if base is None or not us or base <= 0:
            return None, per
        ratio = float(us) / base if float(us) - base >= SLOWED_FLOOR_US else min(
            float(us) / base, 1.0)
        per[name] = {"alone_us": base, "us": float(us), "ratio": ratio}
        least = ratio if least is None else min(least, ratio)
    return least, per


def threshold(method: str) -> float:
    """SLOWED_RATIO of the timing method's device."""
    return SLOWED_RATIO["cpu" if method == "cpu_wall" else "cuda"]


def compare(before: dict, timing: dict) -> tuple[dict[str, Any], bool]:
    """(fields for the timing record, whether the reference looks slowed): the reference's
    figures in the timing stage against alone_us at that stage's method and calls per
    sample (`ref_alone_us`: alone on the clock of `ref_us`; `ref_alone_ratio`: the least
    ratio of the figures compared). Slowed (every figure above the threshold) is confirmed
    with `confirm`."""
    method, k = str(timing.get("method")), int(timing.get("calls_per_sample") or 1)
    least, per = _slowdown(before, method, k, _figures(timing))
    fields: dict[str, Any] = {
        "ref_alone_us": alone_us(before, method, k), "ref_alone_ratio": least,
        "ref_alone": {"points": before.get("points"), "duration_s": before.get("duration_s"),
                      "probe_us": before.get("probe_us"),
                      "cached_age_s": before.get("cached_age_s"),
                      "threshold": threshold(method), "confirm_threshold": CONFIRM_RATIO,
                      "compared": least is not None, "figures": per}}
    return fields, least is not None and least > threshold(method)


def _probe_spread(before: dict, afters: list[dict]) -> float | None:
    """The device copy's slowest time over its fastest, among the measurement before the
    import and those after the timing stage (None off CUDA): on a device of its own the copy
    keeps its time within a few per cent; other work on the device makes it vary."""
    probes = [float(m["probe_us"]) for m in [before, *afters] if m.get("probe_us")]
    if len(probes) < 2 or min(probes) <= 0:
        return None
    return max(probes) / min(probes)


def confirm(before: dict, afters: list[dict], fields: dict[str, Any], timing: dict
            ) -> dict[str, str] | None:
    """The reject finding when the reference timed alone again right after the timing stage
    (`afters`, CONFIRM_REPEATS measurements) is still more than CONFIRM_RATIO slower than
    before the import in their median (the state that slowed it persists: not a passing
    load of the machine), unless the device copy's time varied among the measurements (its
    slowest more than CONTENDED_RATIO times its fastest: other work shares the device; then
    the warning `device_contended`), else None. Adds the check to fields["ref_alone"]["after"]."""
    method, k = str(timing.get("method")), int(timing.get("calls_per_sample") or 1)
    ratios: list[float] = []
    for after in afters:
        figures = [(name, alone_us(after, method, k, column), column)
                   for name, _, column in _figures(timing)]
        one, _ = _slowdown(before, method, k, figures)
        if one is not None:
            ratios.append(one)
    least = stats.median(ratios) if ratios else None
    fields["ref_alone"]["after"] = {
        "points": [a.get("points") for a in afters], "ratios": ratios, "ratio": least,
        "duration_s": round(sum(float(a.get("duration_s") or 0.0) for a in afters), 6)}
    spread = _probe_spread(before, afters)
    fields["ref_alone"]["after"]["probe_us"] = [a.get("probe_us") for a in afters]
    fields["ref_alone"]["after"]["probe_spread"] = spread
    if least is None or least <= CONFIRM_RATIO:
        return None
    if spread is not None and spread > CONTENDED_RATIO:
        return {
            "kind": "device_contended",
            "detail": f"the reference was {least:.2f}x slower after the timing stage than "
                      f"alone before the candidate was imported, but a plain device copy "
                      f"timed with each measurement varied {spread:.2f}x: other work shares "
                      "the GPU (another process, or evaluations of other slots), so the "
                      "slowdown is not judged and the timing figures are less reliable; give "
                      "each evaluation a GPU of its own",
            "severity": "warn"}
    seen = "; ".join(f"{name}: {d['us']:.4g} us a call against {d['alone_us']:.4g} us "
                     f"({d['ratio']:.2f}x)" for name, d in fields["ref_alone"]["figures"].items())
    return {
        "kind": "reference_slowed",
        "detail": f"the reference was slower in the timing stage than alone before the "
                  f"candidate was imported ({seen}; more than {threshold(method)}x), and "
                  f"{least:.2f}x slower when timed alone again after it (the median of "
                  f"{len(ratios)}; more than {CONFIRM_RATIO}x): the candidate changed process "
                  "state that slows the reference (allocator settings, floating-point modes, "
                  "threads, device limits, ...); the worker is replaced",
        "severity": "reject"}


def ref_slot(model: torch.nn.Module, inputs: Any) -> SlotFn:
    """Call j of a timed sample of `model` (the reference's side): slot j's values."""
    def ref_fn(j: int) -> Any:
        with _no_grad():
            return model(*inputs.ref_args(j))
    return ref_fn


class AloneCache:
    """Lives as long as the worker: each case's time alone from the worker's first
    evaluation of it, reused for MAX_AGE_S. The figure a candidate's request is compared
    with then comes from before any later candidate ran in this worker, so state one of them
    left behind (and no check saw) slows the reference against it, not along with it."""
    MAX_AGE_S = 600.0

    def __init__(self) -> None:
        self._figures: dict[tuple[Any, ...], tuple[float, dict]] = {}

    def get(self, key: tuple[Any, ...]) -> dict | None:
        hit = self._figures.get(key)
        if hit is None or _perf_counter() - hit[0] > self.MAX_AGE_S:
            return None
        return {**hit[1], "cached_age_s": round(_perf_counter() - hit[0], 3)}

    def put(self, key: tuple[Any, ...], alone: dict) -> None:
        if "error" not in alone:
            self._figures[key] = (_perf_counter(), alone)


def measure_cases(measure: Callable[..., dict], model: torch.nn.Module, dev: torch.device,
                  runs: list[Any], make_inputs: Callable[[Any], Any],
                  cache: AloneCache | None = None) -> None:
    """Each case's reference timed alone (`measure`: time_alone) into run.ref_alone, on timed
    inputs made like the timing stage's (`make_inputs(trials)`), or from `cache` (by the
    case's source hash, the device and the TF32 switches, which the reference's kernels
    depend on); an exception there is recorded, and the timing stage (which runs the
    reference again) reports what it does."""
    tf32 = (bool(torch.backends.cuda.matmul.allow_tf32), bool(torch.backends.cudnn.allow_tf32))
    for run in runs:
        key = (run.case.problem.sha256, run.case.name, str(dev), tf32)
        if cache is not None and (hit := cache.get(key)) is not None:
            run.ref_alone = hit
            continue
        rot = make_inputs(run.trials)
        try:
            run.ref_alone = measure(ref_slot(model, rot), device=dev, inputs=rot)
        except Exception as e:  # noqa: BLE001 - the problem's code
            run.ref_alone = {"error": errors.describe(e)}
        del rot
        if cache is not None:
            cache.put(key, run.ref_alone)


def judge(alone: dict[str, Any], out: dict[str, Any], measure: Callable[..., dict] | None,
          model: torch.nn.Module, dev: torch.device, make_inputs: Callable[[], Any]) -> bool:
    """The reference's figures in the timing record `out` against its time alone before the
    import (the fields go into `out`). One that looks slowed is timed alone again at once,
    still under the lease: slowed there too, it is a reject (into `out`'s findings) unless
    the device is shared (a warning). `measure` None: compared and recorded, not judged.
    True on a reject: the state that slowed it outlives the request, so the worker is
    replaced."""
    if "error" in alone:
        out["ref_alone"] = {"error": alone["error"], "compared": False}
        return False
    fields, slowed = compare(alone, out)
    out.update(fields)
    fields["ref_alone"]["judged"] = measure is not None
    if not slowed or measure is None:
        return False
    rot = make_inputs()
    try:
        afters = [measure(ref_slot(model, rot), device=dev, inputs=rot)
                  for _ in range(CONFIRM_REPEATS)]
    except Exception as e:  # noqa: BLE001 - recorded; the figures stand unconfirmed
        fields["ref_alone"]["after"] = {"error": errors.describe(e)}
        return False
    found = confirm(alone, afters, fields, out)
    if found is None:
        return False
    if found["kind"] == "device_contended":
        credit_alone(out, found)
    out["findings"] = list(out.get("findings") or []) + [found]
    return found["severity"] == "reject"


def credit_alone(out: dict[str, Any], found: dict[str, str]) -> None:
    """Where a slowed reference cannot be judged (other work shares the device), the speedup
    is not credited with the slowdown: `speedup` and its interval are divided by the
    reference's ratio to its time alone (`speedup_contended` keeps the figure as timed). A
    reward on a shared GPU then only loses by the contention, never gains (on an H200 six
    evaluations at a time slowed a bincount reference 6-18x and not the candidates as much:
    4-7x where an honest kernel gives 1.1-1.7x)."""
    ratio = out.get("ref_alone_ratio")
    if not ratio or ratio <= 1.0 or not out.get("speedup"):
        return
    out["speedup_contended"] = out["speedup"]
    out["speedup"] = out["speedup"] / ratio
    if out.get("speedup_ci95"):
        out["speedup_ci95"] = [x / ratio for x in out["speedup_ci95"]]
    found["detail"] += (f"; the speedup is reported against the reference's time alone: "
                        f"{out['speedup']:.3g}x, not the {out['speedup_contended']:.3g}x timed")
