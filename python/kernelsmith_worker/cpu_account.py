"""CPU time of a CPU timing's samples, per side: the thread budget ($KS_CPU_THREADS) binds
torch and OpenMP only, so a candidate's own std::threads (one per core, joined before
forward returns) would otherwise outnumber the reference's, and a pool that spins between
calls works while the reference is timed. Around each timed sample the CPU clocks of the
timing thread and of every thread alive that is not the evaluator's are read (a thread that
starts inside the sample counts whole; one that also ends inside it is not seen: the
process's CPU clock would see it, but on the worker it read up to ~1 ms a sample more than
its threads' clocks together, which a short reference sample reads as a spinning thread):

- candidate samples: the CPU seconds of the timing thread and of every thread that is not
  the evaluator's, per wall second, must stay within the budget (BUDGET_MARGIN). On a busy
  machine a thread gets less than a CPU: the figure is divided by what the timing thread
  itself got while the reference was timed (available(): 1.0 on an idle machine), so that
  two threads that each get half a CPU read as two;
- reference samples: threads that are not the evaluator's must use next to none
  (FOREIGN_MAX): a pool that waits between calls uses none, a spinning one a whole CPU.

The evaluator's threads are those alive before the candidate was imported
(evaluator_threads_are); the evaluator's other threads are left out of both figures."""

from __future__ import annotations

import threading
import time
from typing import Any

from kernelsmith_worker.findings import finding
from kernelsmith_worker.os_threads import os_threads

# captured when the worker starts, before any candidate is imported
_clock_ns = time.clock_gettime_ns
_perf_ns = time.perf_counter_ns
_native_id = threading.get_native_id

# Candidate samples: CPU seconds per wall second above budget + BUDGET_MARGIN reject. Honest
# code is at ~1.0 per budget thread: the timing thread computes, or blocks while its budget
# of workers does. The margin covers the hand-off (a caller that spins a moment before it
# blocks, a worker that wakes late) and the evaluator's own work in the timing thread; it
# is far below one more busy thread, which adds a whole 1.0 for as long as it runs.
BUDGET_MARGIN = 0.5
# Reference samples: CPU seconds of non-evaluator threads per wall second above this reject.
# A pool that blocks between calls uses ~0; one spinning thread 1.0 (or its share of a CPU).
FOREIGN_MAX = 0.25
# Sides timed for less wall time than this are not judged (too few samples to read).
MIN_WALL_S = 0.02
# available() is not taken below this (a machine so busy that the figure is mostly noise).
MIN_AVAILABLE = 0.25


class _Known:
    """The evaluator's threads (set before each candidate is imported). An object, not a
    module-level set: the integrity guard compares the worker's module-level data by value."""
    __slots__ = ("tids",)

    def __init__(self) -> None:
        self.tids: frozenset[int] = frozenset()


_known = _Known()


def evaluator_threads_are(tids: frozenset[int]) -> None:
    """The threads alive before the candidate was imported: the evaluator's."""
    _known.tids = frozenset(tids)


def thread_cpu_ns(tid: int) -> int | None:
    """CPU time of one thread of this process (its thread CPU clock); None when it ended."""
    try:
        return _clock_ns((~tid << 3) | 6)  # MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)
    except OSError:
        return None


class CpuAccount:
    """CPU seconds per wall second of each side's timed samples (start() before a sample,
    stop(side) after it, in the thread that times)."""

    def __init__(self, evaluator: frozenset[int] | None = None) -> None:
        self._me = _native_id()
        known = evaluator if evaluator is not None else _known.tids
        if not known:
            known = frozenset(os_threads())
        self._known = known
        self._mark: tuple[int, int] | None = None
        self._mark_foreign: dict[int, int] = {}
        self.wall_ns = {"ref": 0, "cand": 0}
        self.own_ns = {"ref": 0, "cand": 0}  # the timing thread
        self.foreign_ns = {"ref": 0, "cand": 0}  # threads that are not the evaluator's

    def _foreign(self) -> dict[int, int]:
        """CPU nanoseconds of every thread alive now that is not the evaluator's."""
        out = {}
        for tid in os_threads():
            if tid != self._me and tid not in self._known:
                ns = thread_cpu_ns(tid)
                if ns is not None:
                    out[tid] = ns
        return out

    def start(self) -> None:
        self._mark_foreign = self._foreign()
        self._mark = (_perf_ns(), thread_cpu_ns(self._me) or 0)

    def stop(self, side: str) -> None:
        if self._mark is None:
            return
        wall, own = _perf_ns() - self._mark[0], (thread_cpu_ns(self._me) or 0) - self._mark[1]
        self._mark = None
        self.wall_ns[side] += wall
        self.own_ns[side] += own
        # a thread that started inside the sample counts whole; one that ended inside it is
        # not seen (its time is lost, which errs towards no finding)
        now = self._foreign()
        self.foreign_ns[side] += sum(max(0, ns - self._mark_foreign.get(tid, 0))
                                     for tid, ns in now.items())

    def per_wall(self, side: str) -> float | None:
        """(timing thread + foreign) CPU seconds per wall second; None if too little was
        timed to say."""
        wall = self.wall_ns[side]
        if wall < MIN_WALL_S * 1e9:
            return None
        return (self.own_ns[side] + self.foreign_ns[side]) / wall

    def available(self) -> float:
        """The share of a CPU one thread got while the reference was timed: the timing
        thread's CPU seconds per wall second then (it never waits), within
        [MIN_AVAILABLE, 1]; 1.0 when too little was timed to say."""
        wall = self.wall_ns["ref"]
        if wall < MIN_WALL_S * 1e9:
            return 1.0
        return min(1.0, max(MIN_AVAILABLE, self.own_ns["ref"] / wall))

    def threads_used(self) -> float | None:
        """The candidate's CPU seconds per wall second over available(): how many threads'
        worth of CPU it used."""
        cand = self.per_wall("cand")
        return None if cand is None else cand / self.available()

    def foreign_per_wall(self, side: str) -> float | None:
        wall = self.wall_ns[side]
        return None if wall < MIN_WALL_S * 1e9 else self.foreign_ns[side] / wall

    def record(self) -> dict[str, Any]:
        """The timing record's fields: cpu_per_wall and foreign_cpu_per_wall, per side."""
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 3)
        return {"cpu_per_wall": {s: r(self.per_wall(s)) for s in ("ref", "cand")},
                "foreign_cpu_per_wall": {s: r(self.foreign_per_wall(s)) for s in ("ref", "cand")},
                "cpu_available": r(self.available()), "cand_threads_used": r(self.threads_used())}

    def findings(self, budget: int) -> list[dict[str, str]]:
        out = []
        used = self.threads_used()
        if used is not None and used > budget + BUDGET_MARGIN:
            out.append(finding(
                "cpu_threads_over_budget",
                f"while timed, the candidate used {used:.2f} threads' worth of CPU "
                f"({self.per_wall('cand'):.2f} CPU seconds per wall second where one thread "
                f"got {self.available():.2f}; its thread budget: {budget}, KS_CPU_THREADS): "
                "threads of its own beyond "
                "the budget (std::thread, a pool, a caller that spins while its workers "
                "compute) count against it as OpenMP threads do", "reject"))
        ref = self.foreign_per_wall("ref")
        if ref is not None and ref > FOREIGN_MAX:
            out.append(finding(
                "cpu_threads_while_reference",
                f"while the reference was timed, threads started by the candidate used "
                f"{ref:.2f} CPU seconds per wall second: a thread left behind must wait "
                "without using the CPU between calls (block, not spin)", "reject"))
        return out
