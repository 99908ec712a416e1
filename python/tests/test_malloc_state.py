"""The C heap's tunables pinned before every CPU sample: what a candidate's library sets with
mallopt() is undone, seen through glibc's own count of mmapped blocks."""
import ctypes

import pytest

from kernelsmith_worker import malloc_state

_libc = ctypes.CDLL(None)
pytestmark = pytest.mark.skipif(not hasattr(_libc, "mallinfo2"), reason="glibc >= 2.33 only")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                               "usmblks", "fsmblks", "uordblks", "fordblks",
                                               "keepcost")]


def _mmapped_blocks() -> int:
    _libc.mallinfo2.restype = _Mallinfo2
    return _libc.mallinfo2().hblks


def _held_is_mmapped(size: int) -> bool:
    """Whether a block of `size` bytes, malloc'd now, is a mmap of its own."""
    _libc.malloc.restype, _libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    _libc.free.argtypes = [ctypes.c_void_p]
    before = _mmapped_blocks()
    p = _libc.malloc(size)
    try:
        return _mmapped_blocks() > before
    finally:
        _libc.free(p)


def test_a_candidates_low_mmap_threshold_is_undone():
    mallopt = _libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    try:
        assert mallopt(malloc_state.M_MMAP_THRESHOLD, 64 << 10) == 1  # what r9_c08 does
        assert _held_is_mmapped(1 << 20)
        assert malloc_state.pin()
        assert not _held_is_mmapped(1 << 20)  # recycled from the heap again
        assert _held_is_mmapped(48 << 20)  # above the pinned 32 MiB: its own mmap
    finally:
        malloc_state.pin()
