"""The scheduling state of the worker's own threads: CPU affinity, scheduling policy and nice
of every thread alive before a candidate is imported. The main thread runs the reference;
a candidate that pins it to one CPU next to its spinners, or moves it to SCHED_IDLE, slows
the reference (or starves the whole evaluation) without touching anything Python sees.
The kernel keeps these per thread, so each thread is read by its native id."""

from __future__ import annotations

import os
import threading
from typing import NamedTuple

from kernelsmith_worker.os_threads import os_threads

# captured when the worker starts, before any candidate is imported
_getaffinity = os.sched_getaffinity
_setaffinity = os.sched_setaffinity
_getscheduler = os.sched_getscheduler
_setscheduler = os.sched_setscheduler
_getparam = os.sched_getparam
_sched_param = os.sched_param
_getpriority = os.getpriority
_setpriority = os.setpriority
_PRIO_PROCESS = os.PRIO_PROCESS  # with a thread id: that thread's nice (Linux)
_native_id = threading.get_native_id

POLICIES = {getattr(os, n): n for n in ("SCHED_OTHER", "SCHED_BATCH", "SCHED_IDLE",
                                          "SCHED_FIFO", "SCHED_RR") if hasattr(os, n)}


class Sched(NamedTuple):
    affinity: frozenset[int]
    policy: int
    priority: int  # the real-time priority (0 outside SCHED_FIFO / SCHED_RR)
    nice: int


def read(tid: int) -> Sched | None:
    """One thread's scheduling state; None when it has ended."""
    try:
        return Sched(frozenset(_getaffinity(tid)), _getscheduler(tid),
                     _getparam(tid).sched_priority, _getpriority(_PRIO_PROCESS, tid))
    except (OSError, ValueError):
        return None


def _policy(p: int) -> str:
    return POLICIES.get(p, f"policy {p}")


def _cpus(s: frozenset[int]) -> str:
    shown = ",".join(str(c) for c in sorted(s)[:8])
    return f"{{{shown}{',...' if len(s) > 8 else ''}}}"


def describe(name: str, tid: int, was: Sched, now: Sched) -> str:
    parts = []
    if now.affinity != was.affinity:
        parts.append(f"CPU affinity {_cpus(was.affinity)} -> {_cpus(now.affinity)}")
    if (now.policy, now.priority) != (was.policy, was.priority):
        parts.append(f"policy {_policy(was.policy)} -> {_policy(now.policy)}"
                     + (f" (priority {now.priority})" if now.priority else ""))
    if now.nice != was.nice:
        parts.append(f"nice {was.nice} -> {now.nice}")
    return f"{name or '?'} (tid {tid}): {', '.join(parts)}"


class ThreadState:
    """The scheduling state of the threads alive when it was captured; changes() names each
    of those threads whose state differs now, restore() puts it back where the kernel lets
    an unprivileged process (leaving SCHED_IDLE or lowering nice may need privileges)."""

    def __init__(self, threads: dict[int, tuple[str, Sched]]) -> None:
        self._threads = threads

    @classmethod
    def capture(cls, only_current: bool = False) -> ThreadState:
        """`only_current`: the calling thread alone (the one that times the reference)."""
        out: dict[int, tuple[str, Sched]] = {}
        threads = os_threads()
        if only_current:
            me = _native_id()
            threads = {me: threads.get(me, "")}
        for tid, name in threads.items():
            s = read(tid)
            if s is not None:
                out[tid] = (name, s)
        return cls(out)

    def tids(self) -> frozenset[int]:
        return frozenset(self._threads)

    def _changed(self) -> list[tuple[int, str, Sched, Sched]]:
        out = []
        for tid, (name, was) in sorted(self._threads.items()):
            now = read(tid)
            if now is not None and now != was:
                out.append((tid, name, was, now))
        return out

    def changes(self) -> list[str]:
        return [describe(name, tid, was, now) for tid, name, was, now in self._changed()]

    def restore(self) -> list[str]:
        """Puts every changed thread back; returns what could not be restored."""
        failed = []
        for tid, name, was, now in self._changed():
            steps = []
            if (now.policy, now.priority) != (was.policy, was.priority):
                steps.append(("policy", lambda: _setscheduler(tid, was.policy,
                                                              _sched_param(was.priority))))
            if now.nice != was.nice:
                steps.append(("nice", lambda: _setpriority(_PRIO_PROCESS, tid, was.nice)))
            if now.affinity != was.affinity:
                steps.append(("affinity", lambda: _setaffinity(tid, was.affinity)))
            for what, step in steps:
                try:
                    step()
                except OSError as e:
                    failed.append(f"{name or '?'} (tid {tid}) {what}: {e.strerror or e}")
        return failed
