"""Where the worker's start-up time goes: seconds per phase, from `python -m kernelsmith_worker`
running its first line to the hello (the `start_phases` list of hello, docs/protocol.md).

Thread-safety: used by the main thread only, before the first request.
"""

from __future__ import annotations

import time


class StartClock:
    """Phases in the order they ran: `mark(name)` ends the phase that began at the last mark
    (or at the clock's creation)."""

    def __init__(self) -> None:
        self._last = time.perf_counter()
        self._phases: list[tuple[str, float]] = []

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self._phases.append((name, now - self._last))
        self._last = now

    def phases(self) -> list[dict[str, object]]:
        """[{"phase": name, "s": seconds}, ...], rounded to milliseconds."""
        return [{"phase": n, "s": round(s, 3)} for n, s in self._phases]
