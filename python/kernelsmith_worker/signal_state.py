"""Signal handlers and timers: a way for candidate code to run at any moment of the evaluation.

A handler installed by the candidate (Python's `signal.signal`, or a native one through
sigaction) and a timer to fire it (setitimer, timer_create) run candidate code in the middle
of the evaluator's own work, handed the interrupted frame: it can sleep while the reference is
timed, contend for the GPU, or rewrite the evaluator's records, all outside any call the
evaluator makes. `SignalState()` is taken when the worker starts, before any candidate code;
`changes()` lists what differs since and puts back what it can. Nothing of it is used by the
evaluator itself.
"""

from __future__ import annotations

import ctypes
import signal
from typing import Any

from kernelsmith_worker.event_watch import unwatched

_TIMERS = (("ITIMER_REAL", signal.ITIMER_REAL), ("ITIMER_VIRTUAL", signal.ITIMER_VIRTUAL),
           ("ITIMER_PROF", signal.ITIMER_PROF))
_SIGNALS = sorted(s for s in signal.valid_signals()
                  if s not in (signal.SIGKILL, signal.SIGSTOP))


class _Sigaction(ctypes.Structure):  # glibc's struct sigaction on Linux
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]


def _libc() -> Any:
    try:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.sigaction.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        return lib
    except (OSError, AttributeError):
        return None


_LIBC = _libc()


def _native(sig: int) -> _Sigaction | None:
    if _LIBC is None:
        return None
    act = _Sigaction()
    if _LIBC.sigaction(int(sig), None, ctypes.byref(act)) != 0:
        return None
    return act


_SA_RESTORER = 0x04000000  # set by glibc whenever a handler is installed


def _key(act: _Sigaction | None) -> tuple[int, int] | None:
    """What a native action does: the handler, and its flags when it is a function (for
    SIG_DFL and SIG_IGN the flags change nothing)."""
    if act is None:
        return None
    handler = act.handler or 0
    return (handler, 0 if handler in (0, 1) else act.flags & ~_SA_RESTORER)


def _posix_timers() -> frozenset[str]:
    """Ids of the process's POSIX timers (timer_create), from /proc/self/timers."""
    try:
        with unwatched(), open("/proc/self/timers") as f:  # the evaluator's read
            return frozenset(line.split(":", 1)[1].strip() for line in f
                             if line.startswith("ID:"))
    except OSError:
        return frozenset()


def _name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


class SignalState:
    """The process's signal handlers (Python and native), blocked signals, wake-up fd, interval
    timers and POSIX timers at construction. Read from the main thread."""

    def __init__(self) -> None:
        self._python = {s: signal.getsignal(s) for s in _SIGNALS}
        self._native = {s: _native(s) for s in _SIGNALS}
        self._addresses = {s: _key(a) for s, a in self._native.items()}
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        self._wakeup = self._read_wakeup()
        self._posix = _posix_timers()

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
        for s in _SIGNALS:
            py = signal.getsignal(s)
            now = _key(_native(s))
            if py is not self._python[s]:
                out.append(f"Python handler of {_name(s)} set to {py!r}"[:160])
                try:
                    signal.signal(s, self._python[s])
                except (TypeError, ValueError, OSError):
                    pass
            elif now != self._addresses[s]:
                out.append(f"native handler of {_name(s)} changed (sigaction)")
            else:
                continue
            base = self._native[s]  # the exact native action back (Python's own flags too)
            if _LIBC is not None and base is not None:
                _LIBC.sigaction(int(s), ctypes.byref(base), None)
        for name, which in _TIMERS:
            delay, interval = signal.getitimer(which)
            if delay or interval:
                out.append(f"interval timer {name} armed ({delay:.4f} s, every {interval:.4f} s)")
                signal.setitimer(which, 0)
        posix = _posix_timers() - self._posix
        if posix:
            out.append(f"POSIX timer(s) created (timer_create): {len(posix)}")
            if _LIBC is not None:
                for tid in posix:
                    try:
                        _LIBC.timer_delete(ctypes.c_void_p(int(tid)))
                    except (ValueError, AttributeError):
                        pass
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        if mask != self._mask:
            out.append("blocked signals changed (pthread_sigmask)")
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
        wake = self._read_wakeup()
        if wake != self._wakeup:
            out.append(f"signal wake-up fd set to {wake}")
            if self._wakeup is not None:
                signal.set_wakeup_fd(self._wakeup)
        return out

