"""The launch accounting of eager timed blocks: every kernel the device ran while the
candidate's blocks were timed (heat and samples), from the worker's always-on kernel log,
less the evaluator's own work. A timed call is not told apart from any other call: the log
records all of them, so a candidate that computes honestly only while observed is observed
while it is timed.

The evaluator's own work in a block is the input refresh and L2 flush before every sample
(measured alone, then taken out by name and count: the log must have seen them, or it was not
recording) and the checks of timed outputs (run aside: their kernels are dropped)."""

from __future__ import annotations

import contextlib
from collections import Counter
from typing import Any, Callable, Iterator

Kernels = list[list]  # [name, device us, launches]


class BlockAccount:
    def __init__(self, api: Any, units: dict[str, Callable[[], None]]) -> None:
        """units: the evaluator's work before one sample, by kind ("refresh" = new values
        and flush, "signed" = signed values and flush, "flush" = flush alone)."""
        self.api = api
        self.error: str | None = None
        self.kernels: dict[str, list] = {}
        self.calls = 0
        self._units: dict[str, Counter] = {}
        self._unit_us: dict[str, dict[str, float]] = {}
        self._window: dict[str, list] = {}
        for kind, fn in units.items():
            got = api.kernels_of(fn)
            if got is None:
                self.error = self._why()
                return
            self._units[kind] = Counter({n: c for n, _, c in got})

    def _take(self, check: str = "strict") -> Kernels | None:
        got = self.api.take_kernels(check)
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
        for name, us, count in self._take() or []:
            w = self._window.setdefault(name, [name, 0.0, 0])
            w[1] += us
            w[2] += count

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
        if not counted or self.error is not None:
            return
        own = Counter()
        for kind, n in units.items():
            for name, c in self._units.get(kind, Counter()).items():
                own[name] += c * n
        for name, c in own.items():
            have = window.get(name, [name, 0.0, 0])[2]
            if have < c:
                self.error = (f"the kernel log saw {have} of the evaluator's {c} launches of "
                              f"{name[:80]} in a timed block: it was not recording")
                return
            w = window[name]
            w[1] -= w[1] * c / have
            w[2] -= c
        for name, us, count in window.values():
            if count > 0:
                k = self.kernels.setdefault(name, [name, 0.0, 0])
                k[1] += us
                k[2] += count
        self.calls += calls

    def result(self) -> dict | None:
        """{"kernels": [[name, us, launches], ...], "calls": calls}, or {"log_error": why}."""
        if self.error is not None:
            return {"log_error": self.error}
        return {"kernels": list(self.kernels.values()), "calls": self.calls}
