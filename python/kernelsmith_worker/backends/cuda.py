"""The `cuda` backend: CUDA C++ through torch.utils.cpp_extension.load_inline.

Compiles are cached across processes in $TORCH_EXTENSIONS_DIR (default
$KS_CACHE_DIR/torch_extensions). The worker wraps `load_inline` so that the extension name
carries a hash of its sources and options: identical sources hit the cache in every worker,
and two candidates that pick the same name with different sources never share (and race
on) one build directory. The sources are also kept so that the candidate's `__global__`
kernels can be recognised in profiler traces.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Any

import torch

from kernelsmith_worker import cuda_ext_checks, library_code, native_builds
from kernelsmith_worker.cpu_ext import LibraryCodeError
from kernelsmith_worker.after_import import after_import
from kernelsmith_worker.backends import cache_root
from kernelsmith_worker.launches import LaunchRecorder, active_recorder

_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")
_IDENT_BEFORE_PAREN = re.compile(r"([A-Za-z_]\w*)\s*(?:<[^<>()]*>)?\s*\($")


def global_kernel_names(source: str) -> set[str]:
    """Names of `__global__` functions declared in CUDA C++ text (also inside Python strings)."""
    names: set[str] = set()
    for m in re.finditer(r"__global__", source):
        head = _LAUNCH_BOUNDS.sub(" ", source[m.end(): m.end() + 400])
        paren = head.find("(")
        if paren < 0:
            continue
        found = _IDENT_BEFORE_PAREN.search(head[: paren + 1])
        if found and found.group(1) not in ("void", "static", "inline"):
            names.add(found.group(1))
    return names


def _sources_text(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def _wrap_load_inline(orig: Any) -> Any:
    @functools.wraps(orig)
    def load_inline(name: str, cpp_sources: Any, cuda_sources: Any = None, *args: Any,
                    **kwargs: Any) -> Any:
        texts = _sources_text(cpp_sources) + _sources_text(cuda_sources)
        rec = active_recorder()
        if rec is not None:
            rec.inline_sources.extend(texts)
        key = repr((texts, args, sorted((k, repr(v)) for k, v in kwargs.items())))
        digest = hashlib.sha256(key.encode()).hexdigest()[:12]
        module = orig(f"{name}_{digest}", cpp_sources, cuda_sources, *args, **kwargs)
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            native_builds.extension_loaded(path)
            _refuse_imports(name, path)
        return module

    load_inline.__ks_hook__ = True  # type: ignore[attr-defined]
    return load_inline


def _refuse_imports(name: str, path: str) -> None:
    """Raises LibraryCodeError (recorded: a reject whatever the candidate does next) when the
    extension imports what a kernel's host code must not (cuda_ext_checks.py)."""
    try:
        found = cuda_ext_checks.extension_findings(Path(path))
    except library_code.ToolMissing as e:
        found = [str(e)]
    if found:
        what = (f"torch extension {name!r} imports {', '.join(found[:6])}: a kernel's host code "
                "launches its own kernels; it does not look up or call libraries, start "
                "processes or threads, reach the interpreter's frames or change device-wide "
                "settings")
        library_code.refuse(what)
        raise LibraryCodeError(what)


def install_load_inline_hook(ext: Any) -> None:
    """Wraps load_inline of torch.utils.cpp_extension (`ext`) once."""
    if not getattr(ext.load_inline, "__ks_hook__", False):
        ext.load_inline = _wrap_load_inline(ext.load_inline)


def cuda_home() -> str | None:
    """Where the CUDA toolkit is, found as torch.utils.cpp_extension finds it ($CUDA_HOME,
    $CUDA_PATH, nvcc on PATH, /usr/local/cuda), without importing it (it imports setuptools:
    seconds of a worker's start on a slow host)."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        return home
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        return os.path.dirname(os.path.dirname(nvcc))
    return "/usr/local/cuda" if os.path.exists("/usr/local/cuda") else None


class CudaBackend:
    name = "cuda"

    def unavailable_reason(self) -> str | None:
        if not torch.cuda.is_available():
            return "no CUDA GPU visible"
        if cuda_home() is None:
            return "CUDA toolkit (nvcc) not found: set CUDA_HOME"
        return None

    def device(self) -> torch.device:
        return torch.device("cuda", torch.cuda.current_device())

    def prepare(self) -> None:
        os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(cache_root() / "torch_extensions"))
        # hooked when something first imports it (a candidate of this backend)
        after_import("torch.utils.cpp_extension", install_load_inline_hook)

    def kernel_names(self, candidate_source: str, recorder: LaunchRecorder) -> set[str]:
        names = global_kernel_names(candidate_source)
        for text in recorder.inline_sources:
            names |= global_kernel_names(text)
        return names | set(recorder.names())
