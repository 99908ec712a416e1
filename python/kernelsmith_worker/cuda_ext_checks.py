"""What a `cuda` candidate's torch extension may import.

A torch extension is C++ with the interpreter's C API, the CUDA runtime and ATen at hand, loaded
into the worker. pybind11's bindings import much of the C API (objects, dicts, errors, even
PyFrame_GetBack and PyFrame_GetCode for its tracebacks), so the C API as a whole cannot be
refused; what a kernel's host code has no use for, and a cheat does, can. The built library's
undefined dynamic symbols (`nm -D --undefined-only`) are read when the cuda backend's
load_inline returns it, and any of these is the reject `library_code`:

- the dynamic loader's lookup (dlopen, dlsym, dladdr, dl_iterate_phdr, ...) and the CUDA
  driver's entry-point lookups (cuGetProcAddress, cudaGetDriverEntryPoint): a library's
  routine called by address;
- BLAS/LAPACK/vendor routines and libraries (cuBLAS, cuBLASLt, cuDNN, cuFFT, cuSPARSE,
  cuSOLVER, NCCL, CUPTI) and ATen's own kernels below the dispatcher (at::native::,
  at::cuda::blas::, the per-op functions of at::cuda:: such as native_layer_norm, whose
  utilities for streams, properties and guards stay allowed): the problem's work done by a
  library;
- signals, timers, memory protection, other processes' memory (library_code's list), new
  processes and threads (fork, clone, posix_spawn, exec*, system, pthread_create);
- the interpreter's frames, locals, module table and hooks (PyEval_GetFrame,
  PyThreadState_GetFrame, PyFrame_GetLocals, PyImport_GetModuleDict, PySys_AddAuditHook,
  PyEval_SetTrace, PyGC_*): the evaluator's own state, reached below every audit event;
- process-wide device settings the reference shares (cudaDeviceSetLimit, the cache and
  shared-memory configuration, the persisting-L2 reset).

Not seen: code that reaches the same things with no import (frames through a traceback's
fields and PyFrame_GetBack, which pybind11 itself imports; function pointers read from
memory). A candidate's C++ shares the process with the evaluator; the cuda backend is not a
sandbox (docs/security.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from kernelsmith_worker import library_code

_DENIED = {
    "a library routine by address or a vendor library": re.compile(
        r"^(?:cuGetProcAddress\w*|cudaGetDriverEntryPoint\w*|cublas\w*|cudnn\w*|cufft\w*|"
        r"cusparse\w*|cusolver\w*|nccl\w*|cupti\w*)$"),
    "a new process or thread": re.compile(
        r"^(?:fork|vfork|_Fork|clone|clone3|__clone|posix_spawnp?|execv\w*|execl\w*|fexecve|"
        r"system|popen|pthread_create)$"),
    "the interpreter's frames, modules or hooks": re.compile(
        r"^(?:PyEval_GetFrame\w*|PyThreadState_GetFrame|PyFrame_GetLocals|PyFrame_GetGlobals|"
        r"PyFrame_GetBuiltins|PyFrame_FastToLocals\w*|PyFrame_LocalsToFast|PyEval_GetLocals|"
        r"PyEval_GetGlobals|PyImport_GetModuleDict|PyImport_GetModule|PySys_GetObject|"
        r"PySys_AddAuditHook|PyEval_SetTrace|PyEval_SetProfile\w*|PyGC_\w*|_PyEval_\w*|"
        r"_PyFrame_\w*|_PyInterpreterState_\w*)$"),
    "a device-wide setting the reference shares": re.compile(
        r"^(?:cudaDeviceSetLimit|cudaThreadSetLimit|cudaDeviceSetCacheConfig|"
        r"cudaDeviceSetSharedMemConfig|cudaCtxResetPersistingL2Cache|cuCtxSetLimit|"
        r"cuCtxSetCacheConfig|cuCtxResetPersistingL2Cache)$"),
    # mangled ATen kernels below the dispatcher: at::native::*, at::cuda::blas::*
    "ATen's kernels below the dispatcher": re.compile(r"^_ZN\w*?2at(?:6native|4cuda4blas)"),
}


# at::cuda:: holds both the device's utilities (streams, properties, guards) and, generated,
# a function per op that calls its CUDA kernel with no dispatch (at::cuda::native_layer_norm)
_AT_CUDA = re.compile(r"^_ZN\w*?2at4cuda(\d+)")
_AT_CUDA_UTILITY = re.compile(
    r"^(?:get|set|warp_size|device_count|current_device|CUDA[A-Z]|OptionalCUDA|detail|"
    r"check|stream|is_available|memory|sleep)")


def _at_cuda_op(name: str) -> bool:
    m = _AT_CUDA.match(name)
    if m is None:
        return False
    ident = name[m.end(): m.end() + int(m.group(1))]
    if re.search(r"Blas|Sparse|Solver|Cudnn|Lt", ident):  # a library's handle
        return True
    return not _AT_CUDA_UTILITY.match(ident)


def _why(name: str) -> str | None:
    for why, pattern in _DENIED.items():
        if pattern.match(name):
            return why
    if _at_cuda_op(name):
        return "ATen's kernels below the dispatcher"
    why = library_code.forbidden(name)
    return None if why in (None, library_code.PYTHON_API) else why


def extension_findings(path: Path) -> list[str]:
    """'symbol (why)' for each import of the extension at `path` a kernel's host code must not
    have (raises library_code.ToolMissing without nm)."""
    found = []
    for symbol in library_code.undefined_symbols(path):
        name = symbol.split("@", 1)[0]
        why = _why(name)
        if why is not None:
            found.append(f"{name} ({why})")
    return sorted(set(found))
