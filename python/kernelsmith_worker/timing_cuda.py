"""The CUDA half of the timing stage (see timing.py for the method): CUDA graphs of k calls,
the graph check, clock settling, L2-flushed interleaved samples and the wall-clock check."""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any, Callable

import torch

from . import kernel_log, stats
from .findings import Hacked
from .phase_marks import Marks
from .timed_account import BlockAccount, timed_sample_kernels
from .timing_blocks import (_elapsed_s, _checkable, _steady_blocks,  # noqa: F401
                            _sustained_blocks, _tensors)
from .timing_policy import (Check, Fn, SlotFn, TimedInputs, TimingConfig, _no_check, build_record,
                            choose_calls_per_sample, side_stream_finding, timed_check_findings)
from .timing_runners import (_EagerRunner, _GraphRunner, _aliased_finding,
                             _aliasing_appeared_finding)

# Captured when the worker starts, before any candidate is imported.
_perf_counter = time.perf_counter
_cuda_event = torch.cuda.Event
_cuda_synchronize = torch.cuda.synchronize
_cuda_graph_cls = torch.cuda.CUDAGraph
_cuda_graph_ctx = torch.cuda.graph
_cuda_stream_cls = torch.cuda.Stream
_cuda_stream_ctx = torch.cuda.stream
_cuda_current_stream = torch.cuda.current_stream


class CudaApi:
    """The torch.cuda calls the timing stage makes, behind one seam so tests can drive the
    CUDA path with a fake device. Events and streams returned follow torch's interfaces."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.log_error = "the kernel log cannot report"  # why take_kernels last gave None

    def device_ctx(self) -> Any:
        return torch.cuda.device(self.device)

    def synchronize(self) -> None:  # device-wide: every stream
        _cuda_synchronize(self.device)

    def event(self) -> Any:
        return _cuda_event(enable_timing=True)

    def new_stream(self) -> Any:
        return _cuda_stream_cls(self.device)

    def current_stream(self) -> Any:
        return _cuda_current_stream(self.device)

    def use_stream(self, stream: Any) -> Any:
        return _cuda_stream_ctx(stream)

    def set_stream(self, stream: Any) -> None:
        torch.cuda.set_stream(stream)

    def is_capturing(self) -> bool:
        return bool(torch.cuda.is_current_stream_capturing())

    def new_graph(self) -> Any:
        return _cuda_graph_cls()

    def capture(self, graph: Any, stream: Any) -> Any:
        return _cuda_graph_ctx(graph, stream=stream)

    def l2_bytes(self) -> int:
        return int(torch.cuda.get_device_properties(self.device).L2_cache_size)

    def l2_flusher(self, nbytes: int) -> Callable[[], None]:
        """A function that evicts L2 by reading `nbytes` (a sum into a preallocated scalar).
        Reading, not zeroing: a memset leaves ~L2-size of dirty lines whose write-back would
        land inside the next timed region; a read leaves clean lines and pays the previous
        sample's write-backs here, outside it."""
        buf = torch.zeros(max(1, nbytes // 4), dtype=torch.float32, device=self.device)
        acc = torch.empty((), dtype=torch.float32, device=self.device)

        def flush() -> None:
            torch.sum(buf, dim=0, out=acc)
        return flush

    def copy_probe(self, nbytes: int) -> Callable[[], None]:
        """A function that copies `nbytes` between two preallocated device buffers: device
        work no state of this process slows (no allocation, no host work, no reuse of L2),
        which other processes' work on the device does."""
        src = torch.ones(max(1, nbytes // 4), dtype=torch.float32, device=self.device)
        dst = torch.empty_like(src)

        def probe() -> None:
            dst.copy_(src)
        return probe

    def empty_cache(self) -> None:
        torch.cuda.empty_cache()

    def kernels_of(self, call: Callable[[], None], check: str = "strict") -> list[list] | None:
        """[name, device us, launches] per kernel name of every kernel call() ran on the
        device (all streams, graph replays included), from the worker's kernel log; None when
        there is no log or it cannot report (`check`: see KernelLog.take). What call() raises
        propagates."""
        if self.take_kernels("none") is None:
            return None
        call()
        return self.take_kernels(check)

    def take_kernels(self, check: str = "strict") -> list[list] | None:
        """Synchronizes the device and returns [name, device us, launches] per kernel name of
        the kernels the log recorded since the previous take; None without a log or when the
        take fails its `check` (KernelLog.take), with the reason in log_error."""
        groups = self.take_groups(check)
        if groups is None:
            return None
        merged: dict[str, list] = {}
        for g in groups:
            m = merged.setdefault(g.name, [g.name, 0.0, 0])
            m[1] += g.total_us
            m[2] += g.count
        return list(merged.values())

    def take_groups(self, check: str = "strict") -> list[kernel_log.KernelGroup] | None:
        """As take_kernels, per (name, stream) as the log records them."""
        log = kernel_log.current()
        if log is None:
            self.log_error = kernel_log.why_not()
            return None
        self.synchronize()
        try:
            return log.take(check)
        except kernel_log.KernelLogError as e:
            self.log_error = str(e)
            return None

    def log_paused(self) -> Any:
        """Kernel records off inside (replays of the evaluator's own graphs only)."""
        log = kernel_log.current()
        return log.paused() if log is not None else contextlib.nullcontext()


class _GraphUnusable(Exception):
    """A graph was captured but cannot be trusted; carries findings for the record."""

    def __init__(self, reason: str, findings: list[dict]) -> None:
        super().__init__(reason)
        self.findings = findings


def _timed_blocks(api: CudaApi, runner: Any, inputs: TimedInputs, fns: dict[str, SlotFn],
                  replay: dict[str, float], cfg: TimingConfig,
                  check: Check, reference_kernels: frozenset[str] | None = None,
                  phases: dict[str, float] | None = None) -> tuple[dict, dict, dict | None]:
    """The sustained and steady blocks, and what the candidate's timed calls ran on the device
    (for the audit's accounting). Eager calls run candidate code each time: every kernel of
    the candidate's blocks is accounted from the kernel log, which records all the time. CUDA
    graph replays run none: the log is paused while they are timed (CUPTI's instrumentation
    would add 1-2 us to every kernel) and candidate graphs are accounted after, replayed
    exactly as timed. The reference's eager blocks are read against `reference_kernels`.
    `phases` gets the seconds of each part (see _time_cuda)."""
    ph = phases if phases is not None else {}
    eager = runner.method == "cuda_events"
    account = BlockAccount(api, {
        "refresh": lambda: (inputs.refresh(False), runner.flush()),
        "signed": lambda: (inputs.refresh(True), runner.flush()),
        "flush": runner.flush}, reference_kernels) if eager else None
    with contextlib.nullcontext() if eager else api.log_paused():
        t0 = _perf_counter()
        got = _sustained_blocks(api, runner, inputs, fns, replay, cfg, check, account)
        t1 = _perf_counter()
        steady = _steady_blocks(api, runner, replay, cfg, check, account)
        api.synchronize()
        t2 = _perf_counter()
    ph["heat"] = got["heat_s"]
    ph["checks"] = got["check_s"]
    ph["sustained"] = max(t1 - t0 - got["heat_s"] - got["check_s"], 0.0)
    ph["steady"] = t2 - t1
    got["tampered"] = got["tampered"] or inputs.tampered()
    ph["checks"] += _perf_counter() - t2
    if account is not None:
        return got, steady, account.result()
    t3 = _perf_counter()
    timed = timed_sample_kernels(api, runner, inputs)
    ph["accounting"] = _perf_counter() - t3
    return got, steady, timed


def _eager_per_call_s(api: CudaApi, fn: Fn, cfg: TimingConfig) -> float:
    """Per-call time of back-to-back eager calls (max of GPU time and host launch time)."""
    e0, e1 = api.event(), api.event()
    api.synchronize()
    e0.record()
    fn()
    e1.record()
    api.synchronize()
    one = max(_elapsed_s(e0, e1), 1e-7)
    n = min(max(int(cfg.estimate_s / one), 1), 200)
    e0.record()
    for _ in range(n):
        fn()
    e1.record()
    api.synchronize()
    return max(_elapsed_s(e0, e1) / n, 1e-7)


def _eager_synced_us(api: CudaApi, fn: Fn, per_call_s: float) -> float:
    """KernelBench-style: events around one call, synchronize, median over a few calls."""
    n = min(max(int(0.03 / per_call_s), 5), 30)
    e0, e1 = api.event(), api.event()
    times = []
    for _ in range(n):
        e0.record()
        fn()
        e1.record()
        api.synchronize()
        times.append(_elapsed_s(e0, e1) * 1e6)
    return stats.median(times)


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    except Exception:
        return True  # unknown: take the careful path


def _close(a: torch.Tensor, b: torch.Tensor, chunk: int = 1 << 26) -> bool:
    """Chunked allclose(atol=rtol=1e-2, NaN == NaN) / equality, with bounded temporaries."""
    fa, fb = a.reshape(-1), b.reshape(-1)
    floating = a.is_floating_point() or a.is_complex()
    for i in range(0, fa.numel(), chunk):
        x, y = fa[i:i + chunk], fb[i:i + chunk]
        same = (torch.isclose(x, y, rtol=1e-2, atol=1e-2, equal_nan=True).all() if floating
                else torch.equal(x, y))
        if not bool(same):
            return False
    return True


def _graph_reproduces(graph: Any, static_out: object, fn: Fn) -> bool | None:
    """Poison the graph's output, replay, compare with an eager call. None: not checkable."""
    outs_g = _tensors(static_out)
    outs_e = _tensors(fn())
    if outs_g is None or outs_e is None:
        return None
    if len(outs_g) != len(outs_e):
        return False
    expected, saved = [], []
    for g, e in zip(outs_g, outs_e):
        if g.shape != e.shape or g.dtype != e.dtype or g.device != e.device:
            return False
        shared = _same_storage(g, e)  # a persistent buffer (input alias, cache)
        expected.append(e.clone() if shared else e)
        # the poison would outlive the check in a persistent buffer: keep its bytes
        saved.append(g.untyped_storage().clone() if shared else None)
    try:
        try:
            for g, e in zip(outs_g, expected):
                if g.is_floating_point() or g.is_complex():
                    g.fill_(float("nan"))
                elif g.dtype == torch.bool:
                    torch.logical_not(e, out=g)
                else:
                    torch.add(e, 1, out=g)
        except RuntimeError:  # not writable in place (e.g. an expanded view): cannot check
            return None
        graph.replay()
        return all(_close(g, e) for g, e in zip(outs_g, expected))
    finally:
        for g, bytes_ in zip(outs_g, saved):
            if bytes_ is not None:
                g.untyped_storage().copy_(bytes_)


def _capture(api: CudaApi, fn: SlotFn, k: int, stream: Any) -> tuple[Any, list[object]]:
    """A graph of k calls; returns it and each call's output (index j: call j)."""
    graph = api.new_graph()
    outs: list[object] = [None] * k
    prev = api.current_stream()
    try:
        with api.capture(graph, stream):
            for j in reversed(range(k)):  # call j reads input slot j; the last one slot 0
                outs[j] = fn(j)  # kept: any call's output may be checked
    except BaseException:
        # torch.cuda.graph skips restoring the current stream when capture_end raises, and a
        # capture left open blocks the stream: undo both before reporting the failure.
        try:
            with api.use_stream(stream):
                if api.is_capturing():
                    graph.capture_end()
        except Exception:
            pass
        api.set_stream(prev)
        raise
    return graph, outs


def _replay_s(api: CudaApi, graph: Any, reps: int = 3) -> float:
    e0, e1 = api.event(), api.event()
    graph.replay()
    times = []
    for _ in range(reps):
        e0.record()
        graph.replay()
        e1.record()
        e1.synchronize()
        times.append(_elapsed_s(e0, e1))
    return stats.median(times)


def _build_graph_runner(
    api: CudaApi, fns: dict[str, SlotFn], side: Any, eager_s: dict[str, float],
    flush: Callable[[], None], cfg: TimingConfig, inputs: TimedInputs,
    check: Check = _no_check,
) -> tuple[_GraphRunner, dict[str, float], str]:
    """Capture both functions with the same k; recapture once if replays came out short.
    When the candidate's calls in one graph return outputs that share memory, only the last
    call's values survive a replay, so no check could see what the others did (a kernel that
    skips them would be timed as k times faster): both are captured again with one call per
    graph, where the timed call is the checked one."""
    k = choose_calls_per_sample(min(eager_s.values()), max(eager_s.values()),
                                cfg.replay_target_s, cfg.max_calls_per_sample, cfg.max_replay_s)
    graphs: dict[str, Any] = {}
    outs: dict[str, object] = {}
    replay: dict[str, float] = {}
    aliased = False
    try:
        for attempt in range(3):
            for g in graphs.values():
                g.reset()
            graphs, outs = {}, {}
            k = min(k, inputs.use(k))  # no two calls of a sample read the same slot
            for name, fn in fns.items():
                if name == "ref":  # a patch that slows the reference would be baked in
                    check("before the reference's CUDA graph was captured")
                graphs[name], outs[name] = _capture(api, fn, k, side)
            if k > 1 and len(_checkable(outs["cand"])) < k:
                k, aliased = 1, True
                continue
            api.synchronize()
            replay = {name: _replay_s(api, g) for name, g in graphs.items()}
            per_call = {name: t / k for name, t in replay.items()}
            k2 = choose_calls_per_sample(min(per_call.values()), max(per_call.values()),
                                         cfg.replay_target_s, cfg.max_calls_per_sample,
                                         cfg.max_replay_s)
            # eager estimates of launch-bound functions overstate device time: k was too small
            if attempt == 0 and not aliased and min(replay.values()) < 0.5 * cfg.replay_target_s \
                    and k2 > k:
                k = k2
                continue
            break
    except BaseException:
        for g in graphs.values():
            g.reset()
        raise
    runner = _GraphRunner(graphs, k, flush, outs)
    runner.aliased = aliased
    checked = True
    try:
        for name in ("ref", "cand"):
            same = _graph_reproduces(graphs[name], outs[name][0], lambda f=fns[name]: f(0))
            checked = checked and same is not None
            if same is False:
                findings = []
                if name == "cand":
                    findings.append({
                        "kind": "graph_output_mismatch",
                        "detail": "a CUDA graph replay of the candidate did not rewrite the "
                                  "output it returned (work outside the current stream, or "
                                  "results cached across calls); timed with eager calls and "
                                  "events instead",
                        "severity": "warn",
                    })
                raise _GraphUnusable(f"the {name} graph replay does not reproduce its output",
                                     findings)
        api.synchronize()
    except BaseException:
        runner.close()
        raise
    return runner, replay, "ok" if checked else "unchecked"


def _wall_check(api: CudaApi, fn: Fn, per_call_s: float, cfg: TimingConfig) -> dict:
    m = min(max(math.ceil(cfg.wall_check_s / max(per_call_s, 1e-7)), 3), 2000)
    e0, e1 = api.event(), api.event()
    best: dict | None = None
    for _ in range(cfg.wall_check_repeats):
        api.synchronize()
        t0 = _perf_counter()
        e0.record()
        for _ in range(m):
            fn()
        e1.record()
        api.synchronize()
        wall_us = (_perf_counter() - t0) * 1e6 / m
        event_us = _elapsed_s(e0, e1) * 1e6 / m
        ratio = wall_us / event_us if event_us > 0 else math.inf
        if best is None or ratio < best["ratio"]:
            best = {"event_us": event_us, "wall_us": wall_us, "ratio": ratio, "calls": m}
    assert best is not None
    return best


def _time_cuda(ref_fn: SlotFn, cand_fn: SlotFn, api: CudaApi, seed: int, cfg: TimingConfig,
               inputs: TimedInputs, check: Check = _no_check,
               reference_kernels: frozenset[str] | None = None) -> dict:
    fns = {"ref": ref_fn, "cand": cand_fn}
    calls0 = {name: (lambda f=fn: f(0)) for name, fn in fns.items()}  # slot 0, eager paths
    findings: list[dict] = []
    phases: dict[str, float] = {}
    mark = Marks(phases)
    with api.device_ctx():
        main = api.current_stream()
        side = api.new_stream()
        for fn in calls0.values():
            fn()
            fn()
        side.wait_stream(main)
        with api.use_stream(side):
            for fn in calls0.values():
                fn()
                fn()
        main.wait_stream(side)
        api.synchronize()
        eager_s = {name: _eager_per_call_s(api, fn, cfg) for name, fn in calls0.items()}
        ref_eager_us = _eager_synced_us(api, calls0["ref"], eager_s["ref"])
        flush = api.l2_flusher(int(max(api.l2_bytes(), 1 << 20) * cfg.l2_flush_factor))
        api.synchronize()
        mark("prepare")

        runner: Any = None
        fallback_reason = None
        graph_check = None
        try:
            runner, replay, graph_check = _build_graph_runner(api, fns, side, eager_s,
                                                              flush, cfg, inputs, check)
            if runner.aliased:
                findings.append(_aliased_finding("graph replay"))
        except Hacked:  # an output no timed call may return (timing.py's plain-output rule)
            raise
        except _GraphUnusable as e:
            fallback_reason = str(e)
            findings += e.findings
            graph_check = "mismatch"
        except Exception as e:  # capture failed: not capturable (sync, host reads, ...)
            msg = " ".join(f"{type(e).__name__}: {e}".split())
            fallback_reason = f"graph capture failed: {msg[:400]}"
            findings.append({
                "kind": "not_graph_capturable",
                "detail": "forward could not be captured in a CUDA graph (a synchronization or "
                          "host read inside forward?); timed per sample with events and a "
                          "device-wide sync, so launch overhead counts",
                "severity": "info",
            })
        if runner is None:
            api.synchronize()  # a context broken by the capture raises here, as a timing error
            k = choose_calls_per_sample(min(eager_s.values()), max(eager_s.values()),
                                        cfg.replay_target_s, cfg.max_eager_calls_per_sample,
                                        cfg.max_replay_s)
            k = min(k, inputs.use(k))
            runner = _EagerRunner(api, fns, k, flush)
            if k > 1:  # outputs sharing memory across calls: one call per sample, as above
                runner.run("cand")
                if len(_checkable(runner.outputs["cand"])) < k:
                    runner = _EagerRunner(api, fns, 1, flush)
                    findings.append(_aliased_finding("sample"))
            replay = {name: runner.calls_per_sample * t + 1e-4 for name, t in eager_s.items()}
        mark("capture")
        try:
            got, steady, timed_kernels = _timed_blocks(api, runner, inputs, fns, replay, cfg,
                                                       check, reference_kernels, phases)
        finally:
            runner.close()
        mark.skip()
        if not got["mismatch"] and got["checked"] < got["planned"]:
            findings.append({
                "kind": "timed_checks_skipped",
                "detail": f"{got['checked']} of the {got['planned']} planned checks of timed "
                          "outputs ran: the evaluator's sampling was interfered with",
                "severity": "reject",
            })
        if got["aliasing_appeared"]:
            findings.append(_aliasing_appeared_finding())
        findings += timed_check_findings(got["tampered"], got["mismatch"], got["unreproduced"])
        signed_rec = None
        if got["cand_signed"] and got["ref_signed"]:
            signed_rec = build_record(runner.method, runner.calls_per_sample, got["ref_signed"],
                                      got["cand_signed"], seed=seed, cfg=cfg, paired=False)
        meds = [blk["median_us"] for blk in got["blocks"] if blk["fn"] == "cand"]
        meds = [m for m in meds if m]
        drift = max(meds) / min(meds) - 1.0 if len(meds) >= 2 else 0.0
        if drift > cfg.block_drift_warn:
            findings.append({
                "kind": "clocks_not_settled",
                "detail": f"the candidate's timed blocks differ by up to {100 * drift:.1f} % "
                          "(clock or power state still moving)",
                "severity": "info",
            })
        mark("statistics")
        wall = _wall_check(api, calls0["cand"], eager_s["cand"], cfg)
        found = side_stream_finding(wall["event_us"], wall["wall_us"], cfg)
        if found:
            findings.append(found)
        mark("wall_check")
        del flush
        api.synchronize()
        api.empty_cache()
    rec = build_record(runner.method, runner.calls_per_sample, got["ref"], got["cand"],
                       seed=seed, cfg=cfg, paired=False)
    # the reference's figure in the sustained blocks of its own distribution, whichever figure
    # is reported: what its time alone before the candidate's import is compared with
    rec["ref_own_us"] = rec["ref_us"]
    rec["speedup_signed"] = signed_rec["speedup"] if signed_rec else None
    if signed_rec and rec["speedup"] and signed_rec["speedup"] and \
            rec["speedup"] > cfg.value_dependence * signed_rec["speedup"]:
        findings.append({
            "kind": "value_dependent_speed",
            "detail": f"on inputs with random signs the speedup is {signed_rec['speedup']:.3g}x "
                      f"against {rec['speedup']:.3g}x on the problem's own distribution: the "
                      "candidate is fast only for values like get_inputs()'; the signed "
                      "figure is reported",
            "severity": "info",
        })
        own = rec["speedup"]
        rec.update({k: signed_rec[k] for k in _FIGURE_KEYS})
        rec["speedup_own_distribution"] = own
    _prefer_steady(rec, steady, runner, seed, cfg)
    rec.update({
        "ref_eager_us": ref_eager_us, "l2_flush": True, "warmup_s": got["heat_s"],
        "warmup_windows": got["heats"], "warmup_stable": drift <= cfg.block_drift_warn,
        "blocks": got["blocks"] + steady["blocks"], "timed_checks": got["checked"],
        "timed_kernels": timed_kernels,
        "wall_check": {k: wall[k] for k in ("event_us", "wall_us", "ratio")},
        "fallback_reason": fallback_reason, "graph_check": graph_check,
        "sequential": got["sequential"],
    })
    rec["findings"] = findings + rec["findings"]
    mark("statistics")
    rec["phases_s"] = mark.rounded()
    return rec


_FIGURE_KEYS = ("ref_us", "cand_us", "ref_cv", "cand_cv", "speedup", "speedup_ci95", "samples",
                "samples_cand", "kept_ref", "kept_cand")


def _prefer_steady(rec: dict, steady: dict, runner: Any, seed: int, cfg: TimingConfig) -> None:
    """Adds the steady-state figure to `rec` (`steady`) and reports it instead of the checked
    blocks' figure when it is lower than that figure's 95 % CI by more than steady_min_gap
    (a step of ~1 % a short steady block may or may not reach): a program that runs the
    kernel back to back gets the steady-state clock. It never raises a speedup: a candidate
    that is faster only when its input values repeat gains nothing here."""
    rec["speedup_checked"] = rec["speedup"]
    rec["reported"] = "checked"
    if not steady["ref"] or not steady["cand"]:
        rec["steady"] = None
        return
    st = build_record(runner.method, runner.calls_per_sample, steady["ref"], steady["cand"],
                      seed=seed, cfg=cfg, paired=False)
    rec["steady"] = {key: st[key] for key in ("ref_us", "cand_us", "speedup", "speedup_ci95",
                                              "samples", "ref_cv", "cand_cv")}
    ci = rec.get("speedup_ci95")
    low = ci[0] if ci else rec["speedup"]
    if st["speedup"] is not None and low is not None and \
            st["speedup"] < low * (1.0 - cfg.steady_min_gap):
        rec.update({key: st[key] for key in _FIGURE_KEYS})
        rec["reported"] = "steady"


# ----------------------------------------------------------------------------- CPU


