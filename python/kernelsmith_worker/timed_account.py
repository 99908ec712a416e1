"""The launch accounting of timed calls, from the worker's always-on kernel log, less the
evaluator's own work. Eager timed blocks: every kernel the device ran while the candidate's
blocks were timed (heat and samples). A timed call is not told apart from any other call: the
log records all of them, so a candidate that computes honestly only while observed is
observed while it is timed. CUDA graphs: replays after timing (no candidate code runs in a
replay).

The evaluator's own work in a block is the input refresh and L2 flush before every sample
(measured alone, then taken out by name and count: the log must have seen them, or it was not
recording) and the checks of timed outputs (run aside: their kernels are dropped).

The reference's eager blocks are read too: only the reference's own kernels (the names it ran
before any candidate code was imported) and the evaluator's may run there, all on one stream.
Anything else (a memset issued by a thread of the candidate's, a kernel on another stream)
was run by someone else while the reference was timed: it slows the reference, and the
speedup with it."""

from __future__ import annotations

import contextlib
from collections import Counter
from typing import Any, Callable, Iterable, Iterator

Kernels = list[list]  # [name, device us, launches]

# Replays of each candidate CUDA graph accounted after timing (a graph replays the same
# kernels every time; several, so a kernel launched only on some replays is seen).
ACCOUNTED_SAMPLES = 5


def less_evaluator(kernels: Iterable[list], own: Counter) -> tuple[Kernels, str | None]:
    """`kernels` less the evaluator's own launches (`own`, by name; device time taken out in
    proportion), and the first of the evaluator's kernels the log saw fewer times than it was
    launched (the log was not recording), else None."""
    left = Counter(own)
    out: Kernels = []
    for name, us, count in kernels:
        taken = min(left[name], count)
        left[name] -= taken
        if count > taken:
            out.append([name, us * (count - taken) / count, count - taken])
    return out, next((name for name, c in left.items() if c > 0), None)


def timed_sample_kernels(api: Any, runner: Any, inputs: Any) -> dict:
    """The kernels of ACCOUNTED_SAMPLES candidate samples run exactly as timed ones, back to
    back (new input values, L2 flush, then the sample), less the evaluator's own kernels: the
    refresh and the flush, recorded alone first and removed by name and count. For CUDA
    graphs, whose replays run no candidate code. Returns {"kernels": [[name, us, launches],
    ...], "calls": calls made}, {"error": why} when a sample raised, or {"log_error": why}
    when the kernel log cannot account them."""
    def evaluator_part() -> None:
        for _ in range(ACCOUNTED_SAMPLES):
            inputs.refresh(False)
            runner.flush()

    def samples() -> None:
        for _ in range(ACCOUNTED_SAMPLES):
            inputs.refresh(False)
            runner.run("cand")

    # replays of the evaluator's graphs: no candidate code runs, graph launches are expected
    own = api.kernels_of(evaluator_part, "alive")
    try:
        got = api.kernels_of(samples, "alive")
    except Exception as e:  # noqa: BLE001 - candidate code ran
        return {"error": f"{type(e).__name__}: {e}"[:400]}
    if own is None or got is None:
        return {"log_error": getattr(api, "log_error", "the kernel log cannot report")}
    kernels, missing = less_evaluator(got, Counter({name: count for name, _, count in own}))
    if missing is not None:
        return {"log_error": f"the kernel log missed the evaluator's own {missing[:80]}: "
                             "it was not recording"}
    return {"kernels": kernels, "calls": ACCOUNTED_SAMPLES * runner.calls_per_sample}


class BlockAccount:
    def __init__(self, api: Any, units: dict[str, Callable[[], None]],
                 reference: frozenset[str] | None = None) -> None:
        """units: the evaluator's work before one sample, by kind ("refresh" = new values
        and flush, "signed" = signed values and flush, "flush" = flush alone). `reference`:
        the names of every kernel, memcpy and memset the reference ran before any candidate
        code was imported; None when the reference side is not the problem's reference (a
        baseline candidate) or was not recorded: its windows are then not read."""
        self.api = api
        self.error: str | None = None
        self.kernels: dict[str, list] = {}
        self.calls = 0
        self.reference = reference
        self.interference: dict[tuple[str, int], list] = {}  # (name, stream) -> [us, count]
        self._units: dict[str, Counter] = {}
        self._window: dict[tuple[str, int], list] = {}  # (name, stream) -> [us, count]
        for kind, fn in units.items():
            got = api.kernels_of(fn)
            if got is None:
                self.error = self._why()
                return
            self._units[kind] = Counter({n: c for n, _, c in got})

    def _take(self, check: str = "strict") -> list | None:
        got = self.api.take_groups(check)
        if got is None and self.error is None:
            self.error = self._why()
        return got

    def _why(self) -> str:
        return str(getattr(self.api, "log_error", "") or "the kernel log cannot report")

    def open(self) -> None:
        """Starts a block's window (what ran before it is not the block's)."""
        self._take("none")
        self._window = {}

    def _keep(self) -> None:
        for g in self._take() or []:
            w = self._window.setdefault((g.name, g.stream), [0.0, 0])
            w[0] += g.total_us
            w[1] += g.count

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """The evaluator's own work inside a block (a check): its kernels are not counted."""
        self._keep()
        try:
            yield
        finally:
            self._take("none")

    def close(self, counted: bool, units: Counter, calls: int) -> None:
        """Ends a block: `units` samples of each unit kind preceded the samples; when
        `counted` (a candidate block), what is left is added to the candidate's kernels."""
        self._keep()
        window, self._window = self._window, {}
        if self.error is not None:
            return
        if not counted:
            self._read_reference(window)
            return
        own: Counter = Counter()
        for kind, n in units.items():
            for name, c in self._units.get(kind, Counter()).items():
                own[name] += c * n
        merged: dict[str, list] = {}
        for (name, _), (us, count) in window.items():
            m = merged.setdefault(name, [name, 0.0, 0])
            m[1] += us
            m[2] += count
        kernels, missing = less_evaluator(merged.values(), own)
        if missing is not None:
            self.error = (f"the kernel log saw fewer than the evaluator's launches of "
                          f"{missing[:80]} in a timed block: it was not recording")
            return
        for name, us, count in kernels:
            k = self.kernels.setdefault(name, [name, 0.0, 0])
            k[1] += us
            k[2] += count
        self.calls += calls

    def _read_reference(self, window: dict[tuple[str, int], list]) -> None:
        """Keeps what ran in a reference block that is neither the reference's nor the
        evaluator's: a name outside both, or anything off the block's stream (the one
        carrying most of their launches)."""
        if self.reference is None or not window:
            return
        allowed = set(self.reference).union(*self._units.values())
        home: Counter = Counter()
        for (name, stream), (_, count) in window.items():
            if name in allowed:
                home[stream] += count
        stream_of_block = home.most_common(1)[0][0] if home else None
        for (name, stream), (us, count) in window.items():
            if name not in allowed or stream != stream_of_block:
                w = self.interference.setdefault((name, stream), [0.0, 0])
                w[0] += us
                w[1] += count

    def result(self) -> dict | None:
        """{"kernels": [[name, us, launches], ...], "calls": calls, "interference": [[name,
        stream, us, count], ...] (present when a reference block had foreign work)}, or
        {"log_error": why}."""
        if self.error is not None:
            return {"log_error": self.error}
        out: dict = {"kernels": list(self.kernels.values()), "calls": self.calls}
        if self.interference:
            out["interference"] = [[name, stream, us, count] for (name, stream), (us, count)
                                   in self.interference.items()]
        return out
