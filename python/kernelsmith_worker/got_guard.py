"""The relocation slots of the process's loaded libraries, snapshotted and compared.

Every call from one shared library into another (libc10's `posix_memalign`, libpython's
`clock_gettime`) jumps through a slot of the caller's global offset table, a pointer that the
dynamic loader writes. Where a library is linked with lazy binding (torch's wheels and the
interpreter are) those slots stay in writable memory. A candidate's native code that finds a
slot (through /proc/self/maps, or a pointer into a library) and writes its own function there
runs inside the evaluator's and the reference's calls: it slows the reference only (the
reference's allocations spin), or makes every clock the evaluator reads lose a share of the
candidate's time. Nothing in Python changes, no thread starts.

The worker runs with LD_BIND_NOW=1 (set by the engine that starts it), so the loader fills
every slot when a library loads and never writes one again. `GotGuard.capture()` (with the
process state, at worker start, before any candidate import) reads the slots
of every loaded ELF object (its JUMP_SLOT and GLOB_DAT relocations, found through its
dynamic section); `changes()` reads them again and names the libraries whose slots differ.
Libraries loaded after the snapshot are added on first sight (`changes()` takes them in), so
a library the candidate's own code loads is not compared, nor one it rewrote before the next
check; a library's slots are read as one range and compared word by word (about a
millisecond in all).
"""

from __future__ import annotations

import ctypes
import os
import struct
from typing import Any

import numpy as _np

_PT_DYNAMIC = 2
_DT_NULL, _DT_PLTRELSZ, _DT_RELA, _DT_RELASZ, _DT_JMPREL = 0, 2, 7, 8, 23
_R_X86_64_GLOB_DAT, _R_X86_64_JUMP_SLOT = 6, 7
_RELA_DTYPE = _np.dtype([("offset", "<u8"), ("info", "<u8"), ("addend", "<i8")])  # Elf64_Rela


class _PhdrInfo(ctypes.Structure):
    _fields_ = [("addr", ctypes.c_uint64), ("name", ctypes.c_char_p),
                ("phdr", ctypes.c_void_p), ("phnum", ctypes.c_uint16)]


class _Phdr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("offset", ctypes.c_uint64), ("vaddr", ctypes.c_uint64),
                ("paddr", ctypes.c_uint64), ("filesz", ctypes.c_uint64),
                ("memsz", ctypes.c_uint64), ("align", ctypes.c_uint64)]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_PhdrInfo), ctypes.c_size_t,
                             ctypes.c_void_p)
_libc = ctypes.CDLL(None)
_iterate = _libc.dl_iterate_phdr
_iterate.argtypes = [_CALLBACK, ctypes.c_void_p]
_string_at = ctypes.string_at


def bind_now() -> bool:
    """Whether this process was started with LD_BIND_NOW set (the worker is: the engine sets
    it): its loader fills every relocation slot at load and never writes one later, so a slot
    that changes was written by someone else. Without it (an in-process test) slots fill at
    their first call and are not compared."""
    return bool(os.environ.get("LD_BIND_NOW"))


def _objects() -> list[tuple[str, int, int]]:
    """(name, load base, address of the dynamic section) of every loaded ELF object."""
    found: list[tuple[str, int, int]] = []

    def visit(info: Any, _size: int, _data: Any) -> int:
        i = info.contents
        phdrs = ctypes.cast(i.phdr, ctypes.POINTER(_Phdr))
        for n in range(i.phnum):
            if phdrs[n].type == _PT_DYNAMIC:
                name = (i.name or b"").decode(errors="replace") or "(main program)"
                found.append((name, i.addr, i.addr + phdrs[n].vaddr))
        return 0

    _iterate(_CALLBACK(visit), None)
    return found


def _dynamic(base: int, at: int) -> dict[int, int]:
    tags: dict[int, int] = {}
    while True:
        tag, value = struct.unpack("<qQ", _string_at(at, 16))
        if tag == _DT_NULL:
            return tags
        tags.setdefault(tag, value)
        at += 16


def _slots(base: int, dyn_at: int) -> tuple[int, int, Any] | None:
    """(lo, hi, word indices): the object's JUMP_SLOT and GLOB_DAT slots as indices of 8-byte
    words from lo, [lo, hi) spanning them all; None without any. Only the slots are compared:
    the span may hold other writable data (a linker that places .data between .got and
    .got.plt, as lld does for Triton's libtriton.so)."""
    tags = _dynamic(base, dyn_at)
    found = []
    for table, size in ((_DT_JMPREL, _DT_PLTRELSZ), (_DT_RELA, _DT_RELASZ)):
        if table not in tags or size not in tags:
            continue
        start = tags[table]
        start = start if start >= base else base + start  # the loader may have relocated it
        raw = _string_at(start, tags[size])
        rela = _np.frombuffer(raw, dtype=_RELA_DTYPE, count=len(raw) // _RELA_DTYPE.itemsize)
        kind = rela["info"] & 0xFFFFFFFF
        found.append(rela["offset"][(kind == _R_X86_64_JUMP_SLOT) | (kind == _R_X86_64_GLOB_DAT)])
    offs = _np.unique(_np.concatenate(found)) if found else _np.zeros(0, dtype=_np.uint64)
    if not offs.size:
        return None
    lo, hi = base + int(offs[0]), base + int(offs[-1]) + 8
    return lo, hi, ((offs - offs[0]) // 8).astype(_np.int64)


def _read(lo: int, hi: int, idx: Any) -> Any:
    return _np.frombuffer(_string_at(lo, hi - lo), dtype="<u8")[idx]


class GotGuard:
    """The relocation slots of the loaded libraries at capture(); changes() compares."""

    def __init__(self, ranges: dict[tuple[str, int], tuple[int, int, Any, Any]]) -> None:
        self._ranges = ranges

    @classmethod
    def capture(cls) -> GotGuard:
        guard = cls({})
        guard._take_new()
        return guard

    def _take_new(self) -> None:
        for name, base, dyn_at in _objects():
            key = (name, base)
            if key in self._ranges:
                continue
            try:
                span = _slots(base, dyn_at)
            except Exception:  # noqa: BLE001 - an object whose tables cannot be read
                continue
            if span is not None:
                lo, hi, idx = span
                self._ranges[key] = (lo, hi, idx, _read(lo, hi, idx))

    def libraries(self) -> int:
        return len(self._ranges)

    def changes(self) -> list[str]:
        """The libraries whose slots differ from the snapshot, one phrase each; libraries
        loaded since are taken in."""
        out = [f"a relocation slot of {os.path.basename(name)} (its calls into other "
               "libraries) was rewritten"
               for (name, _), (lo, hi, idx, snap) in self._ranges.items()
               if not _np.array_equal(_read(lo, hi, idx), snap)]
        self._take_new()
        return out
