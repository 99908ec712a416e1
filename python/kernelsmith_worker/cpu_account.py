"""CPU time of a CPU timing's samples, per side: the thread budget ($KS_CPU_THREADS) binds
torch and OpenMP only, so a candidate's own std::threads (one per core, joined before
forward returns) would otherwise outnumber the reference's, and a pool that spins between
calls works while the reference is timed. Around each timed sample every live thread's CPU
clock is read, then the process's (snapshot()):

- the timing thread's clock and those of the threads that are not the evaluator's give
  their CPU inside the sample (a thread that starts inside it counts whole);
- the process clock less every live thread's clock is the CPU of the threads that ended
  (ended_ns), with that of the child processes (helpers cloned to share the worker's
  memory without being its threads; reaped ones from RUSAGE_CHILDREN, running and
  unreaped ones from /proc): its growth over a sample, less
  what the threads that ended in it had used before it began, is the CPU of threads and
  helpers that ended inside the sample, those started and joined inside one call
  included. The order matters: reading a running thread's clock brings its run time up to
  date in the kernel, so the process clock read right after agrees with the threads' to
  microseconds; read first, it lags each running thread by the time since that thread's
  last scheduler tick (up to milliseconds a read, which a short sample reads as a thread
  that came and went).

- candidate samples: the threads the candidate kept busy at once must stay within the
  budget (DEMAND_MARGIN). A thread that computes is on a CPU or waiting in the run queue
  for one, so the figure is, per wall second, the CPU seconds plus the run-queue waits
  (schedstat) of the timing thread and of every thread that is not the evaluator's, plus
  the CPU of the threads that ended over what one thread got (available()): one thread
  that computes reads 1.0 however busy the machine, two that compute at once 2.0, and a
  caller that blocks while its worker computes 1.0 (threads_demanded()). Where the kernel
  keeps no schedstat, the CPU seconds per wall second over available() are judged instead
  (BUDGET_MARGIN: two threads that each get half a CPU read as two). And whatever the
  demand reads, the CPU the timing thread and the candidate's threads used in a sample past
  what budget threads can use in its window (beyond_per_wall, BEYOND_MAX): threads that
  take turns never exceed it, so a helper computing a small share beside the caller, which
  the demand's margin would let pass, does;
- reference samples: threads that are not the evaluator's, and threads that ended, must use
  next to none (FOREIGN_MAX): a pool that waits between calls uses none, a spinning one a
  whole CPU.

The evaluator's threads are those alive before the candidate was imported
(evaluator_threads_are); the evaluator's other live threads are left out of both figures."""

from __future__ import annotations

import os
import resource
import threading
import time
from typing import Any

from kernelsmith_worker.findings import finding
from kernelsmith_worker.os_threads import children_cpu_ns, os_threads

# captured when the worker starts, before any candidate is imported
_clock_ns = time.clock_gettime_ns
_thread_ns = time.thread_time_ns
_PROCESS = time.CLOCK_PROCESS_CPUTIME_ID
_getrusage = resource.getrusage
_CHILDREN = resource.RUSAGE_CHILDREN
_perf_ns = time.perf_counter_ns
_native_id = threading.get_native_id
_open = open

# Candidate samples: CPU seconds per wall second above budget + BUDGET_MARGIN reject. Honest
# code is at ~1.0 per budget thread: the timing thread computes, or blocks while its budget
# of workers does. The margin covers the hand-off (a caller that spins a moment before it
# blocks, a worker that wakes late) and the evaluator's own work in the timing thread; it
# is far below one more busy thread, which adds a whole 1.0 for as long as it runs.
BUDGET_MARGIN = 0.5
# Candidate samples, judged by run-queue demand: threads kept busy at once above budget +
# DEMAND_MARGIN reject. The figure does not move with the machine's load the way CPU over
# available() does, but short samples on a loaded 2-core machine still read honest
# one-thread kernels up to 1.25 and a pool whose caller blocks up to 1.32 (the snapshots' own
# reads, a wait booked when it ends); r15_c06's helper computing a third of the rows reads
# 1.55-1.63.
DEMAND_MARGIN = 0.4
# Candidate samples whose demand reads over the budget by no more than this past
# DEMAND_MARGIN are timed once more and the second timing is the one judged and reported:
# a loaded machine's hand-offs read an honest pool whose caller blocks up to 1.44 once in a
# while (a thread preempted between its notify and its wait sits in the run queue beside the
# one it woke), and a second timing reads it near 1.0 again; a helper that computes beside
# the caller reads high in both (r15_c06: 1.55-1.63).
CONFIRM_BAND = 0.3
# Candidate samples: CPU seconds per wall second that its threads (the timing thread's
# included) used beyond what `budget` threads can use in each sample's window, above this
# reject. Threads that take turns never read above 0 (the clocks are read inside the window),
# however busy the machine; honest one-thread kernels and pools whose caller blocks read
# 0.000 on the 2-core VM, r23_c05's helper computing 15 % of the rows beside the caller 0.07
# with the machine loaded, r15_c06's 0.12. Unlike the demand, no hand-off wait raises it.
BEYOND_MAX = 0.03
# Reference samples: CPU seconds of non-evaluator threads per wall second above this reject.
# A pool that blocks between calls uses ~0; one spinning thread 1.0 (or its share of a CPU).
FOREIGN_MAX = 0.25
# Reference samples, one-thread budget: the share of their wall time the timing thread spent
# off the CPU without waiting to run (blocked: the interpreter's lock or another lock held by
# a thread of the candidate) above this reject. A one-thread reference computes or waits in
# the run queue (a busy machine); it does not block.
BLOCKED_MAX = 0.1
# Sides timed for less wall time than this are not judged (too few samples to read).
MIN_WALL_S = 0.02
# available() is not taken below this (a machine so busy that the figure is mostly noise).
MIN_AVAILABLE = 0.25


class _Baseline:
    """What a thread that never blocks reads as blocked on this machine, measured when the
    worker starts (calibrate): 0 on most kernels; on some virtual machines (a Firecracker
    guest on an H200 host: 16-24 %) the task clock that schedstat's run time counts runs
    behind the wall clock, or waits go unrecorded."""
    __evaluator_state__ = True  # the evaluator's running state (data_watch.py)
    blocked: float = 0.0


def calibrate(samples: int = 30, sample_s: float = 0.001) -> float:
    """Measures _Baseline.blocked with a loop that holds the interpreter and makes no system
    call, timed like a reference sample; at worker start, before any candidate."""
    acct = CpuAccount(frozenset())
    _Baseline.blocked = 0.0
    for _ in range(samples):
        acct.start()
        end = _perf_ns() + sample_s * 1e9
        while _perf_ns() < end:
            pass
        acct.stop("ref")
    _Baseline.blocked = min(0.5, acct.blocked_share("ref") or 0.0)
    return _Baseline.blocked


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


def _sched_ns() -> tuple[int, int]:
    """(time run, time waited in the run queue) of the calling thread, from its schedstat;
    (0, 0) where the kernel has none. Its CPU clock is read first: that brings the run time
    up to date (else it lags by up to a scheduler tick)."""
    _thread_ns()
    try:
        with _open("/proc/thread-self/schedstat", "rb") as f:
            run, wait = f.read().split()[:2]
        return int(run), int(wait)
    except (OSError, ValueError):
        return 0, 0


_TICK_NS = 1e9 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
_CPUS = max(1, os.cpu_count() or 1)


def steal_ns() -> float:
    """Time a CPU of this virtual machine was taken by its host (the steal column of
    /proc/stat), averaged over the CPUs: a thread's clock does not count it (the scheduler's
    task clock leaves it out), so its schedstat reads it as neither run nor wait. 0 where the
    kernel does not say."""
    try:
        with _open("/proc/stat", "rb") as f:
            fields = f.readline().split()
        return int(fields[8]) * _TICK_NS / _CPUS if len(fields) > 8 else 0.0
    except (OSError, ValueError):
        return 0.0


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
        self._window = 0  # when start() began reading
        self._mark_threads: dict[int, int] = {}
        self._mark_ended = 0
        self.wall_ns = {"ref": 0, "cand": 0}
        self.own_ns = {"ref": 0, "cand": 0}  # the timing thread
        self.foreign_ns = {"ref": 0, "cand": 0}  # live threads that are not the evaluator's
        self.ended_ns = {"ref": 0, "cand": 0}  # threads that ended inside the samples
        # the timing thread off the CPU and not in the run queue: blocked
        self.blocked_ns = {"ref": 0, "cand": 0}
        self._sched = (0, 0)
        self._steal = 0.0
        # CPU plus run-queue waits of the timing thread and the candidate's threads
        self.demand_ns = {"ref": 0, "cand": 0}
        # per sample: (CPU of the timing thread, the candidate's threads and those that
        # ended; the window of the sample's reads), for beyond_per_wall
        self._turns: dict[str, list[tuple[int, int]]] = {"ref": [], "cand": []}
        self._mark_waits: dict[int, int] = {}
        self._waits_read = True  # the kernel keeps schedstat for every thread read

    @staticmethod
    def snapshot() -> tuple[dict[int, int], int]:
        """Every live thread's CPU nanoseconds, then the CPU nanoseconds of the threads no
        longer alive (the process clock, read after the threads', less their sum) and of the
        child processes (helpers cloned to share the worker's memory are processes of their
        own: no thread of it, not in its clock): those reaped (RUSAGE_CHILDREN) and those
        not yet waited for, running or zombies (children_cpu_ns)."""
        clocks = {}
        for tid in os_threads():
            ns = thread_cpu_ns(tid)
            if ns is not None:
                clocks[tid] = ns
        ended = _clock_ns(_PROCESS) - sum(clocks.values())
        kids = _getrusage(_CHILDREN)
        return clocks, ended + int((kids.ru_utime + kids.ru_stime) * 1e9) \
            + children_cpu_ns(tids=clocks)

    def _foreign_waits(self, tids: Any) -> dict[int, int]:
        """Run-queue nanoseconds of the threads that are not the evaluator's (read after
        their CPU clocks, which bring their run time up to date)."""
        out = {}
        for tid in tids:
            if tid == self._me or tid in self._known:
                continue
            try:
                with _open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
                    out[tid] = int(f.read().split()[1])
            except (OSError, ValueError, IndexError):
                if thread_cpu_ns(tid) is not None:
                    self._waits_read = False  # alive, but no schedstat to read
        return out

    def start(self) -> None:
        self._window = _perf_ns()
        self._mark_threads, self._mark_ended = self.snapshot()
        self._mark_waits = self._foreign_waits(self._mark_threads)
        self._sched = _sched_ns()
        self._steal = steal_ns()
        self._mark = (_perf_ns(), self._mark_threads.get(self._me, 0))

    def stop(self, side: str) -> None:
        if self._mark is None:
            return
        wall = _perf_ns() - self._mark[0]
        run, wait = _sched_ns()
        if run:  # the host's steal is neither run nor wait, and is not the candidate's
            stolen = min(wall, steal_ns() - self._steal)
            ran, waited = run - self._sched[0], wait - self._sched[1]
            self.blocked_ns[side] += max(0, wall - ran - waited - stolen)
        else:
            self._waits_read = False
        now, ended = self.snapshot()
        waits = self._foreign_waits(now)
        window = _perf_ns() - self._window  # from the first read to the last
        before = self._mark_threads
        self.wall_ns[side] += wall
        own = now.get(self._me, 0) - self._mark[1]
        self.own_ns[side] += own
        self._mark = None
        foreign = sum(max(0, ns - before.get(tid, 0)) for tid, ns in now.items()
                      if tid != self._me and tid not in self._known)
        self.foreign_ns[side] += foreign
        # the timing thread's run and wait from the schedstat reads that bracket the wall
        # clock's (its CPU clock's delta also holds the snapshots' own reads, up to a tenth
        # of a millisecond sample on a busy machine). A wait is booked when it ends: a thread
        # preempted before it blocked again at the end of one sample books the whole wait in
        # the next one it runs in, though it waited between samples. No thread is busy for
        # longer than the reads' window, so none counts for more.
        self.demand_ns[side] += min(window, max(0, run - self._sched[0])
                                    + max(0, wait - self._sched[1]))
        self.demand_ns[side] += sum(
            min(window, max(0, ns - before.get(tid, 0))
                + max(0, waits.get(tid, 0) - self._mark_waits.get(tid, 0)))
            for tid, ns in now.items() if tid != self._me and tid not in self._known)
        # the ended part grew by the whole life of the threads that ended inside the sample:
        # what those alive at its start had used before it is not the sample's
        gone = sum(ns for tid, ns in before.items() if tid not in now)
        ended_in = ended - self._mark_ended - gone
        self.ended_ns[side] += ended_in
        self._turns[side].append((own + foreign + ended_in, window))

    def _ended(self, side: str) -> int:
        """The ended threads' CPU of a side's samples (never below 0: the per-sample figure
        can read a few microseconds under it)."""
        return max(0, self.ended_ns[side])

    def per_wall(self, side: str) -> float | None:
        """(timing thread + foreign + ended) CPU seconds per wall second; None if too little
        was timed to say."""
        wall = self.wall_ns[side]
        if wall < MIN_WALL_S * 1e9:
            return None
        return (self.own_ns[side] + self.foreign_ns[side] + self._ended(side)) / wall

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

    def threads_demanded(self) -> float | None:
        """How many threads the candidate kept busy at once: CPU plus run-queue waits of the
        timing thread and its own threads, plus the ended threads' CPU over available(), per
        wall second; None when too little was timed or the kernel keeps no schedstat."""
        wall = self.wall_ns["cand"]
        if wall < MIN_WALL_S * 1e9 or not self._waits_read:
            return None
        return (self.demand_ns["cand"] + self._ended("cand") / self.available()) / wall

    def near_budget(self, budget: int) -> bool:
        """Whether the candidate's demand is over the budget, but by no more than
        CONFIRM_BAND past DEMAND_MARGIN: worth a second timing before it is judged."""
        demanded = self.threads_demanded()
        return demanded is not None and \
            budget + DEMAND_MARGIN < demanded <= budget + DEMAND_MARGIN + CONFIRM_BAND

    def beyond_per_wall(self, side: str, budget: int) -> float | None:
        """CPU seconds per wall second that the side's threads used beyond what `budget`
        threads can use in each sample's window; None when too little was timed to say.
        Threads that take turns (a caller that blocks while its pool computes) use at most
        budget x window between them, however busy the machine: the clocks are read inside
        the window. More is threads that computed at the same time, on CPUs the budget does
        not give."""
        wall = self.wall_ns[side]
        if wall < MIN_WALL_S * 1e9:
            return None
        return sum(max(0, cpu - budget * window) for cpu, window in self._turns[side]) / wall

    def foreign_per_wall(self, side: str) -> float | None:
        wall = self.wall_ns[side]
        return None if wall < MIN_WALL_S * 1e9 else (self.foreign_ns[side]
                                                     + self._ended(side)) / wall

    def record(self, budget: int) -> dict[str, Any]:
        """The timing record's fields: cpu_per_wall and foreign_cpu_per_wall, per side, ...;
        `budget`: the candidate's thread budget."""
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 3)
        return {"cpu_per_wall": {s: r(self.per_wall(s)) for s in ("ref", "cand")},
                "ended_cpu_per_wall": {s: r(None if self.wall_ns[s] < MIN_WALL_S * 1e9 else
                                            self._ended(s) / self.wall_ns[s])
                                       for s in ("ref", "cand")},
                "foreign_cpu_per_wall": {s: r(self.foreign_per_wall(s)) for s in ("ref", "cand")},
                "cpu_available": r(self.available()), "cand_threads_used": r(self.threads_used()),
                "cand_threads_demanded": r(self.threads_demanded()),
                "cand_cpu_beyond_budget": r(self.beyond_per_wall("cand", budget)),
                "blocked_baseline": r(_Baseline.blocked),
                "blocked_share": {s: r(self.blocked_share(s)) for s in ("ref", "cand")}}

    def blocked_share(self, side: str) -> float | None:
        """The share of a side's sampled wall time the timing thread was blocked, less what
        this machine reads for a thread that never blocks (calibrate())."""
        wall = self.wall_ns[side]
        if wall < MIN_WALL_S * 1e9:
            return None
        return max(0.0, self.blocked_ns[side] / wall - _Baseline.blocked)

    def findings(self, budget: int) -> list[dict[str, str]]:
        out = []
        demanded, used = self.threads_demanded(), self.threads_used()
        if demanded is not None and demanded > budget + DEMAND_MARGIN:
            out.append(finding(
                "cpu_threads_over_budget",
                f"while timed, the candidate kept {demanded:.2f} threads busy at once (CPU "
                "seconds plus waits for a CPU, per wall second; its thread budget: "
                f"{budget}, KS_CPU_THREADS): threads of its own beyond the budget "
                "(std::thread, a pool, a helper that computes beside the caller, a caller "
                "that spins while its workers compute) count against it as OpenMP threads "
                "do", "reject"))
        elif demanded is None and used is not None and used > budget + BUDGET_MARGIN:
            out.append(finding(
                "cpu_threads_over_budget",
                f"while timed, the candidate used {used:.2f} threads' worth of CPU "
                f"({self.per_wall('cand'):.2f} CPU seconds per wall second where one thread "
                f"got {self.available():.2f}; its thread budget: {budget}, KS_CPU_THREADS): "
                "threads of its own beyond "
                "the budget (std::thread, a pool, a caller that spins while its workers "
                "compute) count against it as OpenMP threads do", "reject"))
        beyond = self.beyond_per_wall("cand", budget)
        if not out and beyond is not None and beyond > BEYOND_MAX:
            out.append(finding(
                "cpu_threads_over_budget",
                f"while timed, the candidate's threads used {beyond:.2f} CPU seconds per wall "
                f"second beyond what its thread budget ({budget}, KS_CPU_THREADS) can use: "
                "threads that computed at the same time (a helper thread or process that "
                "computes a share beside the caller) count against the budget as OpenMP "
                "threads do, however small the share", "reject"))
        blocked = self.blocked_share("ref")
        if budget == 1 and blocked is not None and blocked > BLOCKED_MAX:
            out.append(finding(
                "reference_slowed",
                f"while the reference was timed, the timing thread was blocked (off the CPU, "
                f"not waiting to run) {blocked:.0%} of the time: a one-thread reference does "
                "not block, so a thread of the candidate held the interpreter's lock or another "
                "lock it needs; a thread left behind must not hold them between calls",
                "reject"))
        ref = self.foreign_per_wall("ref")
        if ref is not None and ref > FOREIGN_MAX:
            out.append(finding(
                "cpu_threads_while_reference",
                f"while the reference was timed, threads started by the candidate (alive, or "
                f"started and ended inside a sample) used "
                f"{ref:.2f} CPU seconds per wall second: a thread left behind must wait "
                "without using the CPU between calls (block, not spin)", "reject"))
        return out
