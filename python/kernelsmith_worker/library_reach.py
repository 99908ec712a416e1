"""Where a C name a candidate reaches resolves: its own code and the C/C++ runtime, or a
library torch, NumPy or CUDA bring.

A kernel does the problem's work with its own code. torch's libraries carry whole math
libraries under C names (libtorch_cpu.so exports MKL's SGEMM, sgemm, SGEMM_64, vsExp, ...;
NumPy's OpenBLAS and cuBLAS theirs), and any of them can be called by address once the
candidate has one. Names can be spelled in endless ways, so the rule is by where a name
resolves, not how it is spelled:

- a ctypes lookup (`lib.NAME`, `getattr(lib, NAME)`, `c_int.in_dll`, `_ctypes.dlsym`) made
  by candidate code is resolved here as well (dlsym on the same handle) and the library that
  holds the symbol is named by the dynamic loader (dladdr); one outside the runtime is a
  reject (`library_code`), and so is a lookup of the loader's own functions (dlsym through
  ctypes would find anything without another audit event), of the signal, timer, system call
  and memory protection functions, and of the interpreter's C API (library_code.py's lists);
- candidate code opening the process's memory map or a shared library's file other than its
  own cpu_ext builds (to find a symbol's address without dlsym) is the same reach;
- a shared object candidate code loads itself (ctypes.CDLL and the like) that is neither a
  runtime library nor one cpu_ext built or checked in this worker must pass the checks
  cpu_ext.load runs on the binary (its DT_NEEDED entries, the symbols it imports, system
  call instructions in its code), else loading it is refused the same way;
- a cpu_ext library may depend only on runtime libraries (its DT_NEEDED entries), and each
  symbol it imports that the process's global scope already defines must come from one.

The runtime: the C library and its parts, the C++ and GCC support libraries, the OpenMP
runtimes, libpython and the Python executable, the vDSO, and the libraries cpu_ext itself built
or checked in this worker (cpu_ext.checked_library: those files while unchanged, not a folder).
Calls made from torch's, Triton's or NumPy's own Python code are theirs, not the
candidate's. A candidate that computes a library's address with no lookup and no file read
(walking the loader's structures from its own machine code) is not seen here.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelsmith_worker import library_code

# Shared objects a kernel may call into: the C library (and its split-out parts), the
# dynamic loader, C++/GCC support, OpenMP runtimes (torch ships its own libgomp-<hash>),
# Python itself.
_RUNTIME_RE = re.compile(
    r"^(?:ld-linux[\w.-]*|ld64|libc|libm|libmvec|libpthread|libdl|librt|libutil|libresolv|"
    r"libstdc\+\+|libgcc_s|libatomic|libgomp|libiomp5|libomp|libpython\d[\w.]*|"
    r"linux-vdso|linux-gate)(?:-[0-9a-f]{6,})?(?:\.so[\d.]*)?$")
_MAPS_RE = re.compile(r"^/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/"
                      r"(?:maps|smaps|smaps_rollup|mem|pagemap|map_files|auxv|numa_maps)\b")
_SHARED_OBJECT_RE = re.compile(r"\.so(?:\.\d+)*$")


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _loader() -> tuple[Any, Any, Any, Any]:
    """libc's (or libdl's) dlsym, dladdr, dlopen and dlclose, bound once."""
    for name in (None, "libdl.so.2"):
        try:
            lib = ctypes.CDLL(name)
            dlsym, dladdr, dlopen, dlclose = lib.dlsym, lib.dladdr, lib.dlopen, lib.dlclose
            break
        except (OSError, AttributeError):
            continue
    else:  # pragma: no cover - every glibc has them
        raise OSError("dlsym/dladdr not found in the C library")
    dlsym.restype, dlsym.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]
    dladdr.restype, dladdr.argtypes = ctypes.c_int, [ctypes.c_void_p,
                                                     ctypes.POINTER(_DlInfo)]
    dlopen.restype, dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
    dlclose.restype, dlclose.argtypes = ctypes.c_int, [ctypes.c_void_p]
    return dlsym, dladdr, dlopen, dlclose


_DLSYM, _DLADDR, _DLOPEN, _DLCLOSE = _loader()
_GLOBAL = ctypes.CDLL(None)._handle  # dlopen(NULL): the process's global scope


def locate(address: int | None) -> tuple[str | None, str | None]:
    """(path of the shared object that holds `address`, nearest exported symbol), each None
    where the loader does not know."""
    info = _DlInfo()
    if not address or not _DLADDR(ctypes.c_void_p(address), ctypes.byref(info)):
        return None, None
    return (info.dli_fname.decode(errors="replace") if info.dli_fname else None,
            info.dli_sname.decode(errors="replace") if info.dli_sname else None)


def provider(address: int | None) -> str | None:
    """The path of the shared object that holds `address`, or None."""
    return locate(address)[0]


def lookup(handle: int | None, name: str) -> int | None:
    """dlsym(handle, name) (the global scope for None), without an audit event."""
    try:
        return _DLSYM(ctypes.c_void_p(handle if handle is not None else _GLOBAL),
                      name.encode())
    except (ValueError, UnicodeEncodeError):
        return None


def runtime_name(path: str) -> bool:
    """Whether `path`'s file name is a runtime library's (the C library and its parts, C++ and
    GCC support, OpenMP, Python): a name, not a proof that the file is that library."""
    base = os.path.basename(path)
    return bool(_RUNTIME_RE.match(base)) or base.startswith("python")


SYSTEM_LIB_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64")  # and their subfolders


def _runtime_dirs() -> frozenset[str]:
    """Folders (themselves, not below) the interpreter's and torch's runtime libraries are
    installed in (torch's wheel bundles an OpenMP runtime). Fixed when the worker starts."""
    dirs = {os.path.dirname(os.path.realpath(sys.executable)),
            os.path.realpath(sysconfig.get_config_var("LIBDIR") or "/usr/lib"),
            os.path.realpath(os.path.join(sys.base_prefix, "lib"))}
    try:
        import torch

        dirs.add(os.path.realpath(os.path.join(os.path.dirname(torch.__file__), "lib")))
    except ImportError:
        pass
    return frozenset(dirs)


_RUNTIME_DIRS = _runtime_dirs()


def in_system_dirs(real: str) -> bool:
    return real.startswith(tuple(d + os.sep for d in SYSTEM_LIB_DIRS))


def runtime_file(path: str) -> bool:
    """Whether the file at `path` is a runtime library: a runtime library's name in the
    system's library folders or the folder of the interpreter's or torch's own. A copy of
    any library under such a name elsewhere (a temporary folder, the candidate's own) is
    not."""
    real = os.path.realpath(path)
    return runtime_name(real) and (in_system_dirs(real)
                                   or os.path.dirname(real) in _RUNTIME_DIRS)


def is_runtime(path: str, checked: Callable[[str], bool] | None = None) -> bool:
    """A shared object a kernel may call into (see the module's docstring): a bare name (a
    DT_NEEDED entry, found on the loader's search path) by its name, a file by its identity.
    `checked`: the record of cpu_ext's libraries to ask (the hook passes the one it bound
    when made)."""
    if not path:
        return True
    if "/" not in path:
        return runtime_name(path)
    return runtime_file(path) or os.path.realpath(path) == os.path.realpath(sys.executable) \
        or (checked or _own_build)(path)


def _own_build(path: str) -> bool:
    """A library cpu_ext built or checked in this worker (the candidate's own kernels)."""
    from kernelsmith_worker.cpu_ext import checked_library  # cpu_ext imports this module

    return checked_library(path)


def _loaded_already(path: str) -> bool:
    """Whether the process has loaded the file at `path` (the loader compares the file, not
    the name)."""
    handle = _DLOPEN(path.encode(), os.RTLD_LAZY | os.RTLD_NOLOAD)
    if handle:
        _DLCLOSE(handle)
    return bool(handle)


def foreign(handle: int | None, name: str,
            checked: Callable[[str], bool] | None = None) -> str | None:
    """Why looking `name` up in `handle` reaches library code, or None."""
    why = library_code.forbidden(name)
    if why in (library_code.LOOKUP, library_code.PROCESS, library_code.PYTHON_API):
        return why
    where = provider(lookup(handle, name))
    if where is not None and not is_runtime(where, checked):
        return f"defined by {os.path.basename(where)}"
    return None


# --- cpu_ext libraries, before they are loaded ---------------------------------------------

def needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of a shared library (`readelf -d`). Raises ToolMissing."""
    try:
        out = subprocess.run(["readelf", "-d", "-W", str(path)], capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        raise library_code.ToolMissing(
            f"cannot run readelf (binutils) to check {path}: {e}; install binutils") from e
    if out.returncode != 0:
        raise library_code.ToolMissing(f"readelf -d {path} failed: {out.stderr.strip()[:300]}")
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout)


def import_findings(path: Path, checked: Callable[[str], bool] | None = None) -> list[str]:
    """'what (why)' for each library `path` depends on outside the runtime, and each symbol
    it imports that the global scope resolves outside the runtime."""
    found = [f"{lib} (a library it is linked against)" for lib in needed(path)
             if not is_runtime(lib, checked)]
    for symbol in library_code.undefined_symbols(path):
        where = provider(lookup(None, symbol.split("@", 1)[0]))
        if where is not None and not is_runtime(where, checked):
            found.append(f"{symbol.split('@', 1)[0]} (defined by {os.path.basename(where)})")
    return sorted(set(found))


def binary_findings(path: Path, checked: Callable[[str], bool] | None = None) -> list[str]:
    """What the checks cpu_ext.load runs on a built library find in the shared object at
    `path`: libraries outside the runtime it needs (first: the cheapest to read), then
    forbidden imports and system call instructions. Raises ToolMissing."""
    found = [f"{lib} (a library it is linked against)" for lib in needed(path)
             if not is_runtime(lib, checked)]
    return found or sorted(set(library_code.library_findings(path)
                               + import_findings(path, checked)))


def load_findings(name: str, checked: Callable[[str], bool]) -> list[str]:
    """Why candidate code may not load the shared object `name` (a dlopen argument), or [].
    `checked`: whether a path is a library cpu_ext built or checked in this worker."""
    if "/" not in name:  # found on the loader's search path, fixed when the process started
        return [] if runtime_name(name) else [
            f"{name} is not a runtime library (load the libraries cpu_ext built by path)"]
    path = os.path.realpath(name)
    if checked(path) or (runtime_file(path) and _loaded_already(path)):
        return []
    if not os.path.isfile(path):
        return [f"{path} is not a file"]
    try:
        return binary_findings(Path(path), checked)
    except library_code.ToolMissing as e:
        return [f"it cannot be checked: {e}"]


# --- candidate code, through ctypes and files ----------------------------------------------

_STDLIB = tuple(p for p in {sysconfig.get_paths().get(k, "") for k in ("stdlib", "platstdlib")}
                if p)
_INSTALLED = ("/site-packages/", "/dist-packages/")
_WORKER = str(Path(__file__).parent) + os.sep


def _candidate_caller(frame: Any) -> bool:
    """Whether the first frame above the standard library's (ctypes, functools, io, threading,
    ...) is candidate code: not installed packages, not the worker, not import machinery. A
    stack of the standard library's frames only (a thread started on ctypes.CDLL or getattr
    itself) is the candidate's: the worker's own work always has a frame of its own."""
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<frozen ") or (_STDLIB and name.startswith(_STDLIB)
                                           and not any(p in name for p in _INSTALLED)):
            frame = frame.f_back
            continue
        return not (any(p in name for p in _INSTALLED) or name.startswith(_WORKER))
    return True


def _opened(path: Any, checked: Callable[[str], bool]) -> str | None:
    if isinstance(path, bytes):
        path = path.decode(errors="replace")
    if isinstance(path, str) and (_MAPS_RE.match(path) or (
            _SHARED_OBJECT_RE.search(path) and not checked(os.path.realpath(path)))) \
            and _candidate_caller(sys._getframe(2)):
        return (f"the candidate's code opened {path[:160]}: reading the process's memory map "
                "or a library's file finds library code by address")
    return None


def _looked_up(event: str, args: tuple[Any, ...], checked: Callable[[str], bool]) -> str | None:
    if len(args) < 2 or not isinstance(args[1], str):
        return None  # an ordinal
    handle = args[0] if event == "ctypes.dlsym/handle" else getattr(args[0], "_handle", None)
    if not isinstance(handle, int) or not _candidate_caller(sys._getframe(2)):
        return None
    why = foreign(handle, args[1], checked)
    if why is None:
        return None
    return (f"the candidate's code looked up {args[1][:80]!r} with ctypes ({why}): a kernel "
            "must compute with its own code, not call a library's routines by address")


def _loaded(name: Any, checked: Callable[[str], bool]) -> str | None:
    if isinstance(name, bytes):
        name = name.decode(errors="replace")
    if not isinstance(name, str) or not _candidate_caller(sys._getframe(2)):
        return None  # None: dlopen(NULL), the process's global scope
    found = load_findings(name, checked)
    if not found:
        return None
    return (f"the candidate's code loaded {name[:160]} with ctypes ({'; '.join(found[:4])}): "
            "a shared object outside the runtime must pass cpu_ext's library checks")


class LookupRefused(PermissionError):
    """Raised into candidate code by a refused ctypes lookup or load (recorded as a refusal
    too)."""


_EVENTS = frozenset({"ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.dlopen", "open"})


def make_hook() -> Callable[[str, tuple[Any, ...]], None]:
    """A new audit hook. Everything it decides with is bound here, when it is made (before any
    candidate code): the checks, the refusal log, cpu_ext's record of the libraries it built
    or checked, and its re-entrancy guard (per thread, held only by the hook)."""
    from kernelsmith_worker.cpu_ext import checked_library  # cpu_ext imports this module

    guard = threading.local()
    events, refuse = _EVENTS, library_code.refuse
    opened, looked_up, loaded = _opened, _looked_up, _loaded

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in events or getattr(guard, "busy", False):
            return
        guard.busy = True
        denied: str | None = None
        try:
            if event == "open":
                denied = opened(args[0] if args else None, checked_library)
            elif event == "ctypes.dlopen":
                denied = loaded(args[0] if args else None, checked_library)
            else:
                denied = looked_up(event, args, checked_library)
            if denied is not None:
                refuse(denied)
        except Exception:  # noqa: BLE001 - a fault of the check must not break the audited call
            pass
        finally:
            guard.busy = False
        if denied is not None:  # the lookup or load itself fails: the candidate gets nothing
            raise LookupRefused(denied)

    return hook


_installed = False


def install() -> None:
    """Adds the audit hook (once per process, before any candidate code; audit hooks cannot be
    removed)."""
    global _installed
    if not _installed:
        sys.addaudithook(make_hook())
        _installed = True
