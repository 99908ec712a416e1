"""The C heap's tunables pinned before every CPU sample: what a candidate's library sets with
mallopt() is undone, seen through M_PERTURB's fill of the blocks malloc hands out."""
import ctypes

import pytest

from kernelsmith_worker import malloc_state

_libc = ctypes.CDLL(None)
pytestmark = pytest.mark.skipif(not hasattr(_libc, "mallopt"), reason="glibc only")


def _malloc(size: int) -> ctypes.Array:
    _libc.malloc.restype, _libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    return (ctypes.c_ubyte * size).from_address(_libc.malloc(size))


def _free(block: ctypes.Array) -> None:
    _libc.free.argtypes = [ctypes.c_void_p]
    _libc.free(ctypes.addressof(block))


def test_a_candidates_perturb_setting_is_undone():
    # M_PERTURB: glibc fills every block it hands out with the complement of the value's low
    # byte (and every freed one with the byte): work on every malloc and free of the process
    mallopt = _libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    try:
        assert mallopt(malloc_state.M_PERTURB, 0x5A) == 1
        filled = _malloc(4096)
        assert set(filled) == {0xA5}
        assert malloc_state.pin()
        plain = _malloc(4096)  # the filled block is still held: this one is another
        assert set(plain) != {0xA5}
        _free(filled), _free(plain)
    finally:
        malloc_state.pin()


def test_every_tunable_is_accepted_by_this_c_library():
    assert malloc_state.pin()
