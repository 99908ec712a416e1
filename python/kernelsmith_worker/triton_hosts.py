"""Triton's compiled host modules (each kernel signature's launcher, the driver's utilities),
built by this worker for this worker.

Triton compiles a small C module per kernel signature and imports it into the process: native
host code that runs on every launch. Its own `compile_module_from_src` keeps them in the file
cache, which every worker on the machine shares and candidate code can write: a module planted
there under a launcher's name (a request that ends normally, or one killed before any check)
would be imported by a later worker as Triton's own, and could change the evaluator's records
from below every audit event. So `install` replaces that function: the modules are built into
a folder of this worker's scratch directory (private, removed when the worker ends) and only a
module this worker built is imported. Each is recorded by its file's identity in a vault
(vault.py) when Triton's own code asked for it with Triton's own compiler settings, and
`native_builds.foreign` accepts a Triton module only when `genuine(path)`: a file changed,
renamed over or made by candidate code (which may call the function itself) is not.

    after_import("triton.runtime.build", triton_hosts.install)   # at worker start
    triton_hosts.genuine(path)                                   # native_builds.foreign
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from kernelsmith_worker import library_reach
from kernelsmith_worker.vault import Vault

# the modules of Triton that bind compile_module_from_src by name when they import
_BINDERS = ("triton.backends.nvidia.driver", "triton.backends.amd.driver")


class _Setup:
    __evaluator_state__ = True  # the evaluator's running state (data_watch.py)
    root: Path | None = None  # this worker's folder of host modules
    cc: str | None = None  # $CC when the worker started (Triton's compiler choice reads it)
    builds: int = 0  # modules built in this worker (the tests read it)


def _identity(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _entry_points() -> tuple[Any, Any]:
    """compile_module (the replacement) and genuine over one record held in a vault: only
    record(), called by compile_module, adds to it."""
    def recording(frame: Any) -> bool:
        return frame.f_code is record.__code__ and frame.f_back is not None and \
            frame.f_back.f_code is compile_module.__code__

    built = Vault(recording)

    def record(real: str) -> None:
        if (ident := _identity(real)) is not None:
            built.put(real, ident)

    def genuine(path: str) -> bool:
        """Whether `path` is a host module this worker built for Triton's own code, and the
        file is still the one it built."""
        real = os.path.realpath(path)
        ident = built.get(real)
        return ident is not None and ident == _identity(real)

    def compile_module(build: Any, src: str, name: str, library_dirs: list[str] | None = None,
                       include_dirs: list[str] | None = None, libraries: list[str] | None = None,
                       ccflags: list[str] | None = None) -> Any:
        """triton.runtime.build.compile_module_from_src, built in this worker's folder."""
        key = hashlib.sha256((src + build.platform_key()).encode("utf-8")).hexdigest()
        assert _Setup.root is not None
        path = _Setup.root / key / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
        real = os.path.realpath(path)
        trusted = _trusted_caller(build)
        if not (trusted and genuine(real)):
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=_Setup.root) as tmp:
                src_path = os.path.join(tmp, name + ".c")
                with open(src_path, "w") as f:
                    f.write(src)
                so = build._build(name, src_path, tmp, library_dirs or [], include_dirs or [],
                                  libraries or [], ccflags or [])
                os.replace(so, path)
            _Setup.builds += 1
            real = os.path.realpath(path)
            if trusted:
                record(real)
        return build._load_module_from_path(name, str(path))

    return compile_module, genuine


def _trusted_caller(build: Any) -> bool:
    """Triton's own code asked (not candidate code calling the function itself) with Triton's
    own compiler: no build hook (knobs.build.impl), $CC as the worker started."""
    knobs = getattr(sys.modules.get("triton.knobs"), "build", None)
    if getattr(knobs, "impl", None) is not None or os.environ.get("CC") != _Setup.cc:
        return False
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return frame is not None and not library_reach._candidate_caller(frame)


compile_module, genuine = _entry_points()


def install(build: Any) -> None:
    """Replaces triton.runtime.build.compile_module_from_src (`build` is that module) with
    compile_module, in the modules that bound it by name too. Triton versions without the
    functions it builds on keep their own (the modules they load are then not accepted by
    native_builds.foreign: a reject, never a silent pass)."""
    if not all(callable(getattr(build, f, None)) for f in
               ("compile_module_from_src", "_build", "_load_module_from_path", "platform_key")):
        print("kernelsmith_worker: this Triton's build module lacks the functions the worker "
              "builds host modules with; Triton-built modules will be refused", file=sys.stderr,
              flush=True)
        return
    if _Setup.root is None:
        _Setup.root = Path(tempfile.mkdtemp(prefix="triton_hosts.", dir=tempfile.gettempdir()))
        _Setup.cc = os.environ.get("CC")
    original = build.compile_module_from_src

    def compile_module_from_src(src: str, name: str, *args: Any, **kwargs: Any) -> Any:
        return compile_module(build, src, name, *args, **kwargs)

    compile_module_from_src.__ks_triton_hosts__ = True  # type: ignore[attr-defined]
    build.compile_module_from_src = compile_module_from_src
    for binder in _BINDERS:
        module = sys.modules.get(binder)
        if module is not None and getattr(module, "compile_module_from_src", None) is original:
            module.compile_module_from_src = compile_module_from_src

