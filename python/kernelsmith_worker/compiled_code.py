"""Compiled models the candidate loads: inductor's AOT-compiled code is torch's, not its own.

torch._inductor can compile the reference's own code ahead of time (in a child process, so
nothing of inductor is imported here) into a shared library that torch._C._aoti's runners
(AOTIModelContainerRunnerCpu/Cuda, AOTIModelPackageLoader), or ctypes, load and run: no aten
op in forward, no dispatcher change, yet all of the work is torch's generated code. Every such
library exports the AOTInductor container ABI (AOTInductorModelContainerCreate, ...Run, ...),
whoever compiled it and however it is loaded, so the check is on what is mapped into the
process: a shared library mapped since the candidate was imported that exports that ABI, or
one deleted after it was loaded (it can no longer be checked), is a reject.
"""

from __future__ import annotations

import functools
import os
import subprocess

AOTI_SYMBOL_PREFIX = "AOTInductorModelContainer"
_DELETED = " (deleted)"


def mapped_libraries(maps: str = "/proc/self/maps") -> set[str]:
    """Paths of the shared libraries mapped into this process ('... (deleted)' kept)."""
    out: set[str] = set()
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/") and ".so" in parts[5]:
                    out.add(parts[5])
    except OSError:
        pass  # no /proc: nothing to compare (the check finds nothing)
    return out


@functools.lru_cache(maxsize=256)
def _exports_aoti(path: str, mtime_ns: int) -> bool:
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return AOTI_SYMBOL_PREFIX in out.stdout


def compiled_model_findings(new: set[str]) -> list[str]:
    """'path (why)' for each of the newly mapped libraries that is a compiled torch model or
    cannot be checked."""
    found: list[str] = []
    for path in sorted(new):
        if path.endswith(_DELETED):
            found.append(f"{path[: -len(_DELETED)]} (loaded, then deleted: cannot be checked)")
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

    def new(self) -> list[str]:
        return compiled_model_findings(mapped_libraries() - self._baseline)
