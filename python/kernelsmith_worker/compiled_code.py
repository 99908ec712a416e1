"""Compiled models the candidate loads: inductor's AOT-compiled code is torch's, not its own.

torch._inductor can compile the reference's own code ahead of time (in a child process, so
nothing of inductor is imported here) into a shared library that torch._C._aoti's runners
(AOTIModelContainerRunnerCpu/Cuda, AOTIModelPackageLoader), or ctypes, load and run: no aten
op in forward, no dispatcher change, yet all of the work is torch's generated code. Every such
library exports the AOTInductor container ABI (AOTInductorModelContainerCreate, ...Run, ...),
whoever compiled it and however it is loaded, so the check is on what is mapped into the
process: a shared library mapped since the candidate was imported that exports that ABI is a
reject. A library deleted after it was loaded is read where it is mapped (its read-only
segments hold the dynamic symbol names): a content-addressed cache that another process
rewrites (Triton's launchers, when several workers share one cache) leaves its old file
deleted but mapped, and is judged by what it holds; one that cannot be read is a reject.
"""

from __future__ import annotations

import functools
import os
import subprocess
import time

AOTI_SYMBOL_PREFIX = "AOTInductorModelContainer"
_DELETED = " (deleted)"
_SCAN_CAP = 512 << 20  # bytes of a deleted library's mapped segments read at most
_CHUNK = 16 << 20


def _maps(maps: str) -> list[list[str]]:
    """The file-backed lines of a /proc/PID/maps file, split: [range, perms, offset, dev,
    inode, path]; none when it cannot be read."""
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            lines = [line.rstrip("\n").split(None, 5) for line in f]
    except OSError:
        return []  # no /proc: nothing to compare (the check finds nothing)
    return [parts for parts in lines if len(parts) == 6 and parts[5].startswith("/")]


def mapped_libraries(maps: str = "/proc/self/maps") -> set[str]:
    """Paths of the shared libraries mapped into this process ('... (deleted)' kept)."""
    return {parts[5] for parts in _maps(maps) if ".so" in parts[5]}


@functools.lru_cache(maxsize=256)
def _exports_aoti(path: str, mtime_ns: int) -> bool:
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return AOTI_SYMBOL_PREFIX in out.stdout


def _read_only_segments(label: str, maps: str) -> list[tuple[int, int]]:
    """(start, end) of the non-writable mappings of the file `label` ('path (deleted)')."""
    out: list[tuple[int, int]] = []
    for parts in _maps(maps):
        if parts[5] == label and parts[1][:1] == "r" and parts[1][1:2] != "w":
            lo, _, hi = parts[0].partition("-")
            out.append((int(lo, 16), int(hi, 16)))
    return out


def mapped_exports_aoti(label: str, maps: str = "/proc/self/maps",
                        mem: str = "/proc/self/mem") -> bool | None:
    """Whether the mapped segments of a deleted library hold the AOT container ABI's symbol
    names; None when they cannot be read (no such mapping, no /proc/self/mem, too large)."""
    segments = _read_only_segments(label, maps)
    if not segments or sum(hi - lo for lo, hi in segments) > _SCAN_CAP:
        return None
    needle = AOTI_SYMBOL_PREFIX.encode()
    try:
        fd = os.open(mem, os.O_RDONLY)
    except OSError:
        return None
    try:
        for lo, hi in segments:
            tail = b""
            for at in range(lo, hi, _CHUNK):
                chunk = tail + os.pread(fd, min(_CHUNK, hi - at), at)
                if needle in chunk:
                    return True
                tail = chunk[-(len(needle) - 1):]
    except OSError:
        return None
    finally:
        os.close(fd)
    return False


def compiled_model_findings(new: set[str], maps: str = "/proc/self/maps") -> list[str]:
    """'path (why)' for each of the newly mapped libraries that is a compiled torch model or
    cannot be checked."""
    found: list[str] = []
    for path in sorted(new):
        if path.endswith(_DELETED):
            gone = path[: -len(_DELETED)]
            aoti = mapped_exports_aoti(path, maps)
            if aoti is None:
                found.append(f"{gone} (loaded, then deleted, and its mapped code cannot be "
                             "read: cannot be checked)")
            elif aoti:
                found.append(f"{gone} (loaded, then deleted: an inductor AOT-compiled model, "
                             f"its mapped code holds {AOTI_SYMBOL_PREFIX}*)")
            continue
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            continue
        if _exports_aoti(path, mtime):
            found.append(f"{path} (an inductor AOT-compiled model: exports "
                         f"{AOTI_SYMBOL_PREFIX}*)")
    return found


class CompiledCodeWatch:
    """Libraries mapped since construction (just before the candidate is imported)."""

    def __init__(self) -> None:
        self._baseline = mapped_libraries()
        self.since_ns = time.time_ns()  # the realtime clock, as file change times are

    def mapped_since(self) -> set[str]:
        return mapped_libraries() - self._baseline

    def new(self, mapped: set[str] | None = None) -> list[str]:
        return compiled_model_findings(self.mapped_since() if mapped is None else mapped)
