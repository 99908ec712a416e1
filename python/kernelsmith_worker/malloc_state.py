"""The C heap's tunables, pinned before every CPU sample of either side.

glibc's malloc takes process-wide settings from mallopt(): a candidate's library that sets
a low mmap threshold and no trimming makes every large allocation of the process a fresh
mmap that faults and zeroes its pages, and M_PERTURB has every malloc and free fill the
block. PyTorch's CPU reference allocates its outputs every call and pays for it; a candidate
that writes into a buffer kept across calls does not. No getter exists for the settings, so
the evaluator does not ask what they are: it sets every one to a fixed value before each
candidate is imported and again before each timed sample, for the reference and the
candidate alike (whatever a call sets lasts at most to the end of its own sample).

The fixed values are glibc's defaults except the two that glibc adjusts at run time: the
mmap threshold starts at 128 KiB and rises to the size of any mmapped block freed, up to
32 MiB, and the trim threshold follows at twice it. A long-running program's heap reaches
that ceiling after its first large frees, so both are pinned there: blocks up to 32 MiB are
recycled from the heap, as in a steady-state user process. Elsewhere than glibc (no
mallopt) nothing is done.
"""

from __future__ import annotations

import ctypes
import os

M_MXFAST, M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = 1, -1, -2, -3
M_MMAP_MAX, M_PERTURB, M_ARENA_TEST, M_ARENA_MAX = -4, -6, -7, -8

PINNED = (
    (M_MXFAST, 128),  # the 64-bit default: 64 * sizeof(size_t) / 4
    (M_TRIM_THRESHOLD, 64 << 20),
    (M_TOP_PAD, 128 << 10),
    (M_MMAP_THRESHOLD, 32 << 20),
    (M_MMAP_MAX, 65536),
    (M_PERTURB, 0),
    (M_ARENA_TEST, 8),
    (M_ARENA_MAX, 8 * (os.cpu_count() or 1)),  # glibc's own limit: 8 arenas a core
)


def _mallopt() -> ctypes._CFuncPtr | None:
    try:
        fn = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return fn


# captured when the worker starts, before any candidate is imported
_fn = _mallopt()


def pin() -> bool:
    """Sets every tunable of PINNED; False where this C library has no mallopt or refused
    one."""
    if _fn is None:
        return False
    ok = True
    for param, value in PINNED:
        ok = bool(_fn(param, value)) and ok
    return ok
