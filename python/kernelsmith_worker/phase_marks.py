"""Host seconds per phase of a stage (`phases_s` in a stage's record).

The clock is time.perf_counter taken when this module is imported, before any candidate code
runs: a candidate that patches `time` cannot change what a phase is booked at.
"""

from __future__ import annotations

import time

_perf_counter = time.perf_counter


class Marks:
    """mark(name) books the time since the previous mark (or since creation) to `name`;
    skip() restarts the clock after phases booked elsewhere. Where a phase ends with the
    device synchronized, queued device work is counted in the phase that queued it."""

    def __init__(self, phases: dict[str, float]) -> None:
        self.phases, self.t = phases, _perf_counter()

    def __call__(self, name: str) -> None:
        now = _perf_counter()
        self.phases[name] = self.phases.get(name, 0.0) + now - self.t
        self.t = now

    def skip(self) -> None:
        self.t = _perf_counter()

    def rounded(self) -> dict[str, float]:
        return {key: round(v, 6) for key, v in self.phases.items()}
