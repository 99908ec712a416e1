"""Signal handlers and timers: a way for candidate code to run at any moment of the evaluation.

A Python handler installed by the candidate (`signal.signal`) and a timer to fire it
(`signal.setitimer`, `signal.alarm`) run candidate code in the middle of the evaluator's own
work, handed the interrupted frame: it can sleep while the reference is timed, contend for the
GPU, or rewrite the evaluator's records, all outside any call the evaluator makes.
`SignalState()` is taken when the worker starts, before any candidate code; `changes()` lists
what differs since and puts it back (timers first: a handler put back to the default while a
timer is still armed would let the timer kill the worker).

Native handlers and timers (sigaction, timer_create) are also installed by the CUDA driver and
its tools on their own, so they are not compared here; candidate code that looks those
functions up through ctypes is seen by the event watch (event_watch.py).
"""

from __future__ import annotations

import signal

_TIMERS = (("ITIMER_REAL", signal.ITIMER_REAL), ("ITIMER_VIRTUAL", signal.ITIMER_VIRTUAL),
           ("ITIMER_PROF", signal.ITIMER_PROF))
_SIGNALS = sorted(s for s in signal.valid_signals()
                  if s not in (signal.SIGKILL, signal.SIGSTOP))


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
            delay, interval = signal.getitimer(which)
            if delay or interval:
                out.append(f"interval timer {name} armed ({delay:.4f} s, every {interval:.4f} s)")
                signal.setitimer(which, 0)
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
