"""The worker's threads as the kernel lists them (/proc/self/task), native threads included:
a thread started from C (a pthread of a compiled helper, a library's worker) runs no Python
code, so neither `threading.enumerate()` nor `sys._current_frames()` shows it. Such a thread
can issue device work or hold the GIL while the reference is timed, slowing it. Likewise the
worker's child processes: one with a CUDA context of its own shares the GPU with the
reference, and nothing of it shows in this process's kernel log. The worker is made a
subreaper, so a process that double-forks to leave it is still its child."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from typing import Iterable, Iterator

from kernelsmith_worker.event_watch import unwatched

# captured when the worker starts, before any candidate is imported
_listdir = os.listdir
_open = open
_enumerate = threading.enumerate


class _Started:
    """Threads started inside evaluator_threads(). An object, not a module-level set: the
    integrity guard compares the worker's module-level data by value, and this one grows."""
    __slots__ = ("tids",)

    def __init__(self) -> None:
        self.tids: set[int] = set()


_evaluator = _Started()


def os_threads() -> dict[int, str]:
    """Thread id -> name (comm) of every thread of this process alive now."""
    out: dict[int, str] = {}
    with unwatched():  # the evaluator's reads, not the candidate's file traffic
        try:
            entries = _listdir("/proc/self/task")
        except OSError:
            return out
        for entry in entries:
            try:
                with _open(f"/proc/self/task/{entry}/comm", encoding="utf-8",
                           errors="replace") as f:
                    out[int(entry)] = f.read().strip()
            except (OSError, ValueError):
                continue  # it ended between the listing and the read
    return out


@contextlib.contextmanager
def evaluator_threads() -> Iterator[None]:
    """Threads started inside are the evaluator's own (CUPTI's, when the kernel log detaches
    and attaches again): only around the evaluator's work, where no candidate code runs."""
    before = set(os_threads())
    try:
        yield
    finally:
        _evaluator.tids.update(set(os_threads()) - before)


def _children(task_dir: str, tids: Iterable[int] | None = None
              ) -> Iterator[tuple[int, str, list[str]]]:
    """(pid, name, the fields of its stat after the name) of every child process of the
    process whose task folder is `task_dir` (/proc/self/task), zombies included. `tids`: its
    threads where the caller has just listed them."""
    if tids is None:
        try:
            tids = _listdir(task_dir)
        except OSError:
            return
    for tid in tids:
        try:
            with _open(f"{task_dir}/{tid}/children", encoding="ascii") as f:
                pids = [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            try:
                with _open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
                    stat = f.read()
            except OSError:
                continue  # gone (reaped) in between
            name, _, rest = stat.partition(" (")[2].rpartition(") ")
            yield pid, name, rest.split()


def live_children() -> dict[int, str]:
    """Pid -> name of every live (not zombie) child process of this process."""
    with unwatched():
        return {pid: name for pid, name, fields in _children("/proc/self/task")
                if fields[:1] != ["Z"]}


_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def children_cpu_ns(task_dir: str = "/proc/self/task", depth: int = 4,
                    tids: Iterable[int] | None = None) -> int:
    """CPU nanoseconds of this process's descendants that have not been waited for: live
    ones and zombies. A process cloned to share the worker's memory is no thread of it, and
    its CPU reaches RUSAGE_CHILDREN only once it is reaped, which its creator may put off
    until no sample is being timed. Per process, the larger of its stat's user + system
    time (every thread it had, in clock ticks: 0 for a helper that lives a few
    milliseconds) and its threads' scheduler run time (nanoseconds, the threads alive).
    `tids`: the threads of `task_dir`'s process, where the caller has just listed them."""
    total = 0
    with unwatched():
        for pid, _, fields in _children(task_dir, tids):
            try:  # utime, stime: fields 14 and 15 of stat, 12 and 13 after the name
                ticks = int((int(fields[11]) + int(fields[12])) * _TICK_NS)
            except (IndexError, ValueError):
                ticks = 0
            total += max(ticks, _run_ns(f"/proc/{pid}/task"))
            if depth > 1:
                total += children_cpu_ns(f"/proc/{pid}/task", depth - 1)
    return total


def _run_ns(task_dir: str) -> int:
    """The scheduler run time (schedstat) of a process's threads, summed."""
    total = 0
    try:
        tids = _listdir(task_dir)
    except OSError:
        return 0
    for tid in tids:
        try:
            with _open(f"{task_dir}/{tid}/schedstat", "rb") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


def become_subreaper() -> bool:
    """Orphaned descendants of this process become its children (prctl
    PR_SET_CHILD_SUBREAPER). False where the kernel refuses."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


class ThreadWatch:
    """The threads alive when it was made (and whatever allow_current() adds): any other
    thread alive later, not a Python thread, was started by code that ran since."""

    def __init__(self, native_threads: bool = True, allowed: int = 0) -> None:
        """native_threads False: only child processes are watched. `allowed`: how many new
        native threads may stay alive (a CPU candidate's OpenMP pool or a pool of its own,
        up to the thread budget, waiting between calls); more is a finding."""
        self._threads = native_threads
        self._allowed = allowed
        self._known = set(os_threads())
        self._children = set(live_children())

    def allow_current(self) -> None:
        """Accepts the threads alive now (after the evaluator's own work that starts them)."""
        self._known |= set(os_threads())

    def new(self) -> list[str]:
        """'name (tid N)' of each thread alive now that is neither known nor a Python thread
        (those have their own check); none while there are no more than `allowed`."""
        found = self.left()
        return found if len(found) > self._allowed else []

    def left(self) -> list[str]:
        """new()'s threads, however many: at the end of a request, the allowed pool too (a
        thread that outlives its request would be taken for the evaluator's by the next)."""
        if not self._threads:
            return []
        python = {t.native_id for t in _enumerate() if t.native_id is not None}
        return [f"{name or '?'} (tid {tid})" for tid, name in sorted(os_threads().items())
                if tid not in self._known and tid not in python and tid not in _evaluator.tids]

    def new_children(self) -> list[str]:
        """'name (pid N)' of each live child process that was not alive when it was made."""
        return [f"{name or '?'} (pid {pid})" for pid, name in sorted(live_children().items())
                if pid not in self._children]


def outlived(watch: ThreadWatch | None) -> bool:
    """Whether candidate threads outlive the request `watch` was made for (said on stderr):
    the worker is then replaced, since the next request would take them for the
    evaluator's own and not count their CPU time."""
    left = watch.left() if watch is not None else []
    if left:
        print(f"candidate threads still alive after the request ({', '.join(left[:4])}): "
              "the worker is replaced", file=sys.stderr, flush=True)
    return bool(left)
