"""Signal handlers and timers: a way for candidate code to run at any moment of the evaluation.

A Python handler installed by the candidate (`signal.signal`) and a timer to fire it
(`signal.setitimer`, `signal.alarm`) run candidate code in the middle of the evaluator's own
work, handed the interrupted frame: it can sleep while the reference is timed, contend for the
GPU, or rewrite the evaluator's records, all outside any call the evaluator makes.
`SignalState()` is taken when the worker starts, before any candidate code; `changes()` lists
what differs since and puts it back (timers first: a handler put back to the default while a
timer is still armed would let the timer kill the worker).

POSIX timers (timer_create, from compiled code too) are the process's own objects, listed by
the kernel in /proc/self/timers: one that was not there when the worker started is a change,
and it is deleted. Native handlers (sigaction) are also installed by the CUDA driver and its
tools on their own, so they are not compared; without a timer or a thread to raise it a
handler does not run, and candidate code that looks those functions up through ctypes is
seen by the event watch (event_watch.py).
"""

from __future__ import annotations

import ctypes
import os
import signal

from kernelsmith_worker import pc_sample
from kernelsmith_worker.event_watch import unwatched

_TIMERS = (("ITIMER_REAL", signal.ITIMER_REAL), ("ITIMER_VIRTUAL", signal.ITIMER_VIRTUAL),
           ("ITIMER_PROF", signal.ITIMER_PROF))
_SIGNALS = sorted(s for s in signal.valid_signals()
                  if s not in (signal.SIGKILL, signal.SIGSTOP))
_TIMER_DELETE = {"x86_64": 226, "aarch64": 111}.get(os.uname().machine)  # syscall numbers


def posix_timers() -> dict[int, str]:
    """Kernel timer id -> its description, of every POSIX timer of this process."""
    out: dict[int, str] = {}
    try:
        with unwatched(), open("/proc/self/timers") as f:  # the evaluator's read
            lines = f.read().splitlines()
    except OSError:
        return out
    tid = None
    for line in lines:
        key, _, value = line.partition(":")
        if key == "ID" and value.strip().isdigit():
            tid = int(value)
            out[tid] = ""
        elif tid is not None:
            out[tid] = f"{out[tid]} {line.strip()}".strip()
    return out


def _delete_timer(tid: int) -> None:
    if _TIMER_DELETE is not None:
        ctypes.CDLL(None).syscall(_TIMER_DELETE, ctypes.c_int(tid))


def _name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


class SignalState:
    """The process's Python signal handlers, interval timers and wake-up fd at construction.
    Read from the main thread."""

    def __init__(self) -> None:
        self._python = {s: signal.getsignal(s) for s in _SIGNALS}
        self._posix = set(posix_timers())
        self._wakeup = self._read_wakeup()

    @staticmethod
    def _read_wakeup() -> int | None:
        try:
            fd = signal.set_wakeup_fd(-1)
            signal.set_wakeup_fd(fd)
            return fd
        except (ValueError, OSError):  # not the main thread
            return None

    def changes(self) -> list[str]:
        """What differs from the state at construction, each put back where possible."""
        out: list[str] = []
        for name, which in _TIMERS:
            if which == signal.ITIMER_PROF and pc_sample.recording():
                continue  # the CPU sampler's own timer (pc_sample.py), disarmed after it
            delay, interval = signal.getitimer(which)
            if delay or interval:
                out.append(f"interval timer {name} armed ({delay:.4f} s, every {interval:.4f} s)")
                signal.setitimer(which, 0)
        for tid, what in posix_timers().items():
            if tid not in self._posix:
                out.append(f"POSIX timer {tid} created ({what})"[:160])
                _delete_timer(tid)
        for s in _SIGNALS:
            py = signal.getsignal(s)
            if py is not self._python[s]:
                out.append(f"Python handler of {_name(s)} set to {py!r}"[:160])
                try:
                    signal.signal(s, self._python[s])
                except (TypeError, ValueError, OSError):
                    pass
        wake = self._read_wakeup()
        if wake != self._wakeup:
            out.append(f"signal wake-up fd set to {wake}")
            if self._wakeup is not None:
                signal.set_wakeup_fd(self._wakeup)
        return out
