"""State of the CUDA context and of torch's cuBLAS that the reference shares with the
candidate, below anything Python can see: a candidate that sets it slows the reference (a
cuBLAS SM-count target on torch's handle, cuBLASLt's heuristics cache switched off, the
context's cache configuration) or keeps its own data in L2 across the evaluator's flushes
(a persisting-L2 set-aside). Read through ctypes from the libraries torch loaded, at worker
start (before any candidate), and compared at every check; what changed is put back."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Callable

_CU_LIMIT_MAX_L2_FETCH_GRANULARITY = 5
_CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 6


@dataclass(frozen=True)
class _Setting:
    label: str
    read: Callable[[], int | None]
    write: Callable[[int], bool]


def mapped_library(stem: str) -> str | None:
    """Path of the shared library `stem`* this process has mapped (the one torch loaded)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ")[-1]
                if os.path.basename(path).startswith(stem + "."):
                    return path
    except OSError:
        return None
    return None


def _getter(fn: Callable[..., int], ctype: type, *lead: object) -> Callable[[], int | None]:
    def read() -> int | None:
        out = ctype()
        if fn(*lead, ctypes.byref(out)) != 0:
            return None
        return int(out.value)
    return read


def _settings() -> list[_Setting]:
    """What can be read here: nothing without CUDA (a CPU worker) or a library torch did
    not load."""
    import torch

    if not torch.cuda.is_available():
        return []
    out: list[_Setting] = []
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return []
    for name, limit in (("persisting L2 cache size", _CU_LIMIT_PERSISTING_L2_CACHE_SIZE),
                        ("L2 fetch granularity", _CU_LIMIT_MAX_L2_FETCH_GRANULARITY)):
        out.append(_Setting(
            f"the CUDA context's {name} limit",
            lambda limit=limit: _limit(cuda, limit),
            lambda v, limit=limit: cuda.cuCtxSetLimit(ctypes.c_int(limit),
                                                      ctypes.c_size_t(v)) == 0))
    out.append(_Setting("the CUDA context's cache configuration",
                        _getter(cuda.cuCtxGetCacheConfig, ctypes.c_int),
                        lambda v: cuda.cuCtxSetCacheConfig(ctypes.c_int(v)) == 0))
    torch.cuda.current_blas_handle()  # torch loads cuBLAS and makes its handle
    blas_path = mapped_library("libcublas")
    if blas_path is not None:
        blas = ctypes.CDLL(blas_path)

        def handle() -> ctypes.c_void_p:
            return ctypes.c_void_p(torch.cuda.current_blas_handle())

        for what, get, put in (("SM count target", "cublasGetSmCountTarget",
                                "cublasSetSmCountTarget"),
                               ("atomics mode", "cublasGetAtomicsMode",
                                "cublasSetAtomicsMode")):
            if not hasattr(blas, get):
                continue
            out.append(_Setting(
                f"the {what} of torch's cuBLAS handle",
                lambda g=getattr(blas, get): _getter(g, ctypes.c_int, handle())(),
                lambda v, p=getattr(blas, put): p(handle(), ctypes.c_int(v)) == 0))
    lt_path = mapped_library("libcublasLt")
    if lt_path is not None:
        lt = ctypes.CDLL(lt_path)
        if hasattr(lt, "cublasLtHeuristicsCacheGetCapacity"):
            out.append(_Setting(
                "cuBLASLt's heuristics cache capacity",
                _getter(lt.cublasLtHeuristicsCacheGetCapacity, ctypes.c_size_t),
                lambda v: lt.cublasLtHeuristicsCacheSetCapacity(ctypes.c_size_t(v)) == 0))
    return out


def _limit(cuda: ctypes.CDLL, limit: int) -> int | None:
    out = ctypes.c_size_t()
    if cuda.cuCtxGetLimit(ctypes.byref(out), ctypes.c_int(limit)) != 0:
        return None
    return int(out.value)


class DeviceState:
    """The settings as they were when it was made (at worker start)."""

    def __init__(self, settings: list[_Setting] | None = None) -> None:
        self._settings = _settings() if settings is None else settings
        self._values = [s.read() for s in self._settings]

    def watched(self) -> list[str]:
        return [s.label for s in self._settings]

    def changes(self) -> list[str]:
        """What differs from the start, put back (one phrase each; empty when intact)."""
        out = []
        for s, want in zip(self._settings, self._values):
            now = s.read()
            if now != want and want is not None:
                fixed = s.write(want)
                out.append(f"{s.label} changed from {want} to {now}"
                           + ("" if fixed else " (could not be put back)"))
        return out
