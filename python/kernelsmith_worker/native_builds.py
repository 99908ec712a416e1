"""Native code a candidate brings into the worker: torch extensions are the `cuda` backend's
route only, and every shared library mapped during a request must come from a builder the
evaluator knows.

A torch extension is C++ with the interpreter's C API at hand (pybind11): loaded into the
worker, it can reach the evaluator's frames, objects and records below every audit event, so
a Triton or cpu candidate that builds one steps around everything the worker checks. A Triton
candidate's work is its Triton kernels and a cpu candidate's its cpu_ext libraries (whose
binaries are checked before they load), so for those backends `load_inline`, `load` and the
other builders of torch.utils.cpp_extension refuse candidate code: the refusal is the reject
`library_code`, whatever the candidate does with the error. Calls from installed libraries
(torch's own use of the module) are theirs.

However it got there (a builder's private function, setuptools in a subprocess, the import
system's loader, ctypes), native code runs from a shared library mapped into the process, so
the check that decides is on the mapping (`foreign`, at the stage ends' full checks): a
library mapped since the candidate's import must be a cpu_ext library checked in this worker,
a host module this worker built for Triton (triton_hosts.py), the cuda backend's own torch
extension of this request, or a file that was already there, unchanged, before the request
began in an installed package's folder, the system's library folders or a folder the worker
had loaded libraries from at start. Anything else (a library written during the request, one in a
temporary or the candidate's folder, one loaded and deleted) is the reject `library_code`.

    native_builds.request_backend("triton")   # per request, before the candidate's import
    after_import("torch.utils.cpp_extension", native_builds.install)   # at worker start
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

from kernelsmith_worker import compiled_code, cpu_ext, library_code, library_reach, triton_hosts
from kernelsmith_worker.event_watch import is_library_file

# the builders of torch.utils.cpp_extension that compile and load code
BUILDERS = ("load_inline", "load")


class NativeBuildRefused(Exception):
    """A candidate of a backend other than cuda built a torch extension."""


_DELETED = " (deleted)"


class _Request:
    __evaluator_state__ = True  # the evaluator's running state (data_watch.py)
    backend: str = ""
    extensions: set[str] = set()  # the cuda backend's torch extensions of this request
    # folders the worker had loaded libraries from when it started (CUDA's driver among them)
    start_dirs: frozenset[str] = frozenset()
    toolkit: str = ""  # the CUDA toolkit's folder (torch loads NVRTC and others from it lazily)


def at_worker_start() -> None:
    """Notes the folders of the libraries loaded so far (before any candidate)."""
    _Request.start_dirs = frozenset(os.path.dirname(os.path.realpath(p))
                                    for p in compiled_code.mapped_libraries()
                                    if not p.endswith(_DELETED))
    from kernelsmith_worker.backends.cuda import cuda_home

    home = cuda_home()
    _Request.toolkit = os.path.realpath(home) + os.sep if home else ""


def request_backend(name: str) -> None:
    """The backend of the request about to run."""
    _Request.backend = name
    _Request.extensions = set()


def extension_loaded(path: str) -> None:
    """A torch extension the cuda backend's load_inline built for this request."""
    _Request.extensions.add(os.path.realpath(path))


def _installed(real: str) -> bool:
    return library_reach.in_system_dirs(real) or is_library_file(real) or \
        os.path.dirname(real) in _Request.start_dirs or \
        (bool(_Request.toolkit) and real.startswith(_Request.toolkit))


def foreign(mapped: set[str], since_ns: int) -> list[str]:
    """'path (why)' for each library in `mapped` (mapped since the candidate's import; /proc
    maps labels) that no builder the evaluator knows made; `since_ns`: when the request
    began (the realtime clock, as file change times are)."""
    found: list[str] = []
    for label in sorted(mapped):
        deleted = label.endswith(_DELETED)
        path = label[: -len(_DELETED)] if deleted else label
        real = os.path.realpath(path)
        if cpu_ext.checked_library(real) or triton_hosts.genuine(real) or \
                real in _Request.extensions:
            continue
        if deleted:
            found.append(f"{path} (loaded, then deleted)")
            continue
        try:
            changed = os.stat(real).st_ctime_ns
        except OSError:
            found.append(f"{path} (no longer readable)")
            continue
        if changed < since_ns and _installed(real):
            continue
        why = "written during the request" if changed >= since_ns else \
            "outside installed packages and the system library folders"
        found.append(f"{path} ({why})")
    return found


def _refusing(name: str, orig: Any) -> Any:
    @functools.wraps(orig)
    def builder(*args: Any, **kwargs: Any) -> Any:
        if _Request.backend != "cuda" and library_reach._candidate_caller(sys._getframe(1)):
            what = (f"torch.utils.cpp_extension.{name} called by a {_Request.backend or 'non-cuda'}"
                    " candidate: native host code (a torch extension) is the cuda backend's; a "
                    "triton candidate computes with Triton kernels, a cpu candidate with "
                    "kernelsmith_worker.cpu_ext, whose libraries are checked before they load")
            library_code.refuse(what)
            raise NativeBuildRefused(what)
        return orig(*args, **kwargs)

    builder.__ks_native_builds__ = True  # type: ignore[attr-defined]
    return builder


def install(ext: Any) -> None:
    """Wraps the builders of torch.utils.cpp_extension (`ext`) once."""
    for name in BUILDERS:
        orig = getattr(ext, name, None)
        if orig is not None and not getattr(orig, "__ks_native_builds__", False):
            setattr(ext, name, _refusing(name, orig))
