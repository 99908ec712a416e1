"""The helper `cpu` backend candidates use to compile and call C++ kernels.

    from kernelsmith_worker import cpu_ext

    lib = cpu_ext.load(
        name="softmax",
        source=CPP,                       # C++ source; exported functions are extern "C"
        functions={"softmax_rows": "void(const float*, float*, int64, int64)"},
    )
    lib.softmax_rows(x, y, rows, cols)    # tensors are passed as their data pointers

The source is compiled by the system compiler (`c++`, or $CXX) with
`-O3 -march=native -fopenmp -shared -fPIC -std=c++17` (retried without -fopenmp when that
fails) into $KS_CACHE_DIR/cpu_ext/<key>/ (default ~/.cache/kernelsmith), keyed by
sha256(name, source, flags, compiler version, CPU model): identical sources compile once per
machine. $CXX and $KS_CACHE_DIR are read once, when the worker imports this module (before any
candidate code): changing the environment later changes nothing here. Libraries are loaded with
ctypes; every call is counted and timed for the audit.
A library that reaches library code (its undefined dynamic symbols or its source name
dlopen/dlsym or BLAS/LAPACK routines: library_code.py; it is linked against, or imports a
symbol defined by, a library outside the C/C++ runtime: library_reach.py), or whose
extra_cflags are more than code-generation flags (compile_flags.py), is refused: load raises
LibraryCodeError and the evaluation rejects the candidate (finding `library_code`). build()
called by candidate code runs the same checks; a library candidate code loads by other means
is checked when it is loaded (library_reach.py).

Signature grammar: `RET(ARG, ARG, ...)`.
- RET: void, int32, int64, float, double, bool (aliases: int, long, int32_t, int64_t,
  size_t, float32, float64).
- ARG pointer `[const] T*`, T one of float, double, half, bfloat16, int8, uint8, int16,
  int32, int64, bool, void. The argument must be a contiguous CPU torch.Tensor whose dtype
  matches T (`void*` accepts any dtype); None passes a null pointer.
- ARG scalar: int32, int64, float, double, bool (and the aliases above).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

import torch

from kernelsmith_worker import compile_flags, library_code, library_reach
from kernelsmith_worker.findings import finding
from kernelsmith_worker.launches import active_recorder
from kernelsmith_worker.vault import Vault

BASE_FLAGS: tuple[str, ...] = ("-O3", "-march=native", "-shared", "-fPIC", "-std=c++17")
OPENMP_FLAG = "-fopenmp"
COMPILE_TIMEOUT_S = 300
LOG_CHARS = 8000

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class CompileError(RuntimeError):
    """The C++ source did not compile or does not export a declared function.
    `log` carries the compiler output."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


class LibraryCodeError(RuntimeError):
    """The library reaches the dynamic loader or BLAS/LAPACK routines: its work would not be
    the candidate's own kernel's."""


# --- types -----------------------------------------------------------------------------------

_SCALARS: dict[str, Any] = {
    "int32": ctypes.c_int32, "int": ctypes.c_int32, "int32_t": ctypes.c_int32,
    "int64": ctypes.c_int64, "long": ctypes.c_int64, "int64_t": ctypes.c_int64,
    "size_t": ctypes.c_size_t, "float": ctypes.c_float, "float32": ctypes.c_float,
    "double": ctypes.c_double, "float64": ctypes.c_double, "bool": ctypes.c_bool,
}
_POINTEE_DTYPES: dict[str, torch.dtype | None] = {
    "float": torch.float32, "float32": torch.float32, "double": torch.float64,
    "float64": torch.float64, "half": torch.float16, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16, "int8": torch.int8,
    "int8_t": torch.int8, "uint8": torch.uint8, "uint8_t": torch.uint8,
    "int16": torch.int16, "int16_t": torch.int16, "int32": torch.int32, "int": torch.int32,
    "int32_t": torch.int32, "int64": torch.int64, "int64_t": torch.int64, "long": torch.int64,
    "bool": torch.bool, "void": None,
}


@dataclass(frozen=True)
class ArgType:
    text: str  # as written, for messages
    pointer: bool
    dtype: torch.dtype | None  # pointers: required dtype (None = any)
    ctype: Any  # scalars: the ctypes type


@dataclass(frozen=True)
class Signature:
    ret: Any  # ctypes type or None for void
    args: tuple[ArgType, ...]


def parse_signature(text: str) -> Signature:
    """Parses 'void(const float*, float*, int64)'. Raises ValueError with the reason."""
    m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*", text)
    if not m:
        raise ValueError(f"signature {text!r} is not of the form 'RET(ARG, ...)'")
    ret_name, arg_text = m.group(1), m.group(2).strip()
    if ret_name == "void":
        ret = None
    elif ret_name in _SCALARS:
        ret = _SCALARS[ret_name]
    else:
        raise ValueError(f"signature {text!r}: unknown return type {ret_name!r}")
    args: list[ArgType] = []
    if arg_text and arg_text != "void":
        for raw in arg_text.split(","):
            a = " ".join(raw.replace("*", " * ").split())
            words = [w for w in a.split() if w not in ("const", "restrict", "__restrict__")]
            if words and words[-1] == "*":
                base = words[0] if len(words) == 2 else ""
                if base not in _POINTEE_DTYPES:
                    raise ValueError(f"signature {text!r}: unknown pointer type {raw.strip()!r}")
                args.append(ArgType(raw.strip(), True, _POINTEE_DTYPES[base], ctypes.c_void_p))
            elif len(words) == 1 and words[0] in _SCALARS:
                args.append(ArgType(raw.strip(), False, None, _SCALARS[words[0]]))
            else:
                raise ValueError(f"signature {text!r}: unknown argument type {raw.strip()!r}")
    return Signature(ret, tuple(args))


def _convert(fn: str, i: int, t: ArgType, value: Any) -> Any:
    if t.pointer:
        if value is None:
            return None
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{fn}: argument {i} ({t.text}) must be a torch.Tensor, "
                            f"got {type(value).__name__}")
        if value.device.type != "cpu":
            raise ValueError(f"{fn}: argument {i} ({t.text}) is on {value.device}; "
                             "cpu_ext kernels take CPU tensors")
        if not value.is_contiguous():
            raise ValueError(f"{fn}: argument {i} ({t.text}) is not contiguous; "
                             "call .contiguous() first")
        if t.dtype is not None and value.dtype != t.dtype:
            raise TypeError(f"{fn}: argument {i} ({t.text}) expects {t.dtype}, got {value.dtype}")
        return value.data_ptr()
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise TypeError(f"{fn}: argument {i} ({t.text}) is a scalar, got a tensor of "
                            f"shape {list(value.shape)}")
        value = value.item()
    if t.ctype in (ctypes.c_float, ctypes.c_double):
        if not isinstance(value, (int, float)):
            raise TypeError(f"{fn}: argument {i} ({t.text}) expects a number, "
                            f"got {type(value).__name__}")
        return float(value)
    if not isinstance(value, (int, bool)):
        raise TypeError(f"{fn}: argument {i} ({t.text}) expects an int, got {type(value).__name__}")
    return int(value)


def _make_caller(lib_name: str, fn_name: str, cfunc: Any, sig: Signature) -> Callable[..., Any]:
    cfunc.restype = sig.ret
    cfunc.argtypes = [a.ctype for a in sig.args]
    label = f"{lib_name}.{fn_name}"

    def call(*args: Any) -> Any:
        if len(args) != len(sig.args):
            raise TypeError(f"{fn_name}: expects {len(sig.args)} arguments, got {len(args)}")
        converted = [_convert(fn_name, i, t, v)
                     for i, (t, v) in enumerate(zip(sig.args, args, strict=True))]
        rec = active_recorder()
        if rec is None:
            return cfunc(*converted)
        with rec.launch(label):
            return cfunc(*converted)

    call.__name__ = fn_name
    call.__qualname__ = label
    return call


class Library:
    """A compiled cpu_ext library; declared functions are attributes."""

    def __init__(self, name: str, path: Path, build_log: str,
                 functions: dict[str, Callable[..., Any]]) -> None:
        self.name = name
        self.path = path
        self.build_log = build_log
        self._functions = functions
        for fn_name, fn in functions.items():
            setattr(self, fn_name, fn)

    def __repr__(self) -> str:
        return f"<cpu_ext.Library {self.name} {sorted(self._functions)} at {self.path}>"


# --- compiling -------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Settings:
    cache_root: Path  # $KS_CACHE_DIR, default ~/.cache/kernelsmith
    cxx: str  # $CXX, default c++


def _settings_at_start() -> Callable[[], _Settings]:
    """The environment's settings, read now (the worker's start) and never again."""
    settings = _Settings(
        Path(os.environ.get("KS_CACHE_DIR") or Path.home() / ".cache" / "kernelsmith"),
        os.environ.get("CXX") or "c++")
    return lambda: settings


_settings = _settings_at_start()


def cache_root() -> Path:
    """$KS_CACHE_DIR as it was when the worker started, default ~/.cache/kernelsmith."""
    return _settings().cache_root


def compiler() -> str:
    """$CXX as it was when the worker started, default c++."""
    return _settings().cxx


@functools.lru_cache(maxsize=8)
def _compiler_version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL)
        return out.stdout.splitlines()[0] if out.stdout else f"{cxx} (no version)"
    except (OSError, subprocess.SubprocessError) as e:
        raise CompileError(f"C++ compiler {cxx!r} is not usable: {e}; set CXX") from e


@functools.lru_cache(maxsize=1)
def _cpu_model() -> str:
    from kernelsmith_worker.device import cpu_device_info

    return str(cpu_device_info()["name"])


def _run_compiler(cmd: list[str]) -> tuple[bool, str]:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"compiler timed out after {COMPILE_TIMEOUT_S} s: {' '.join(cmd)}"
    except OSError as e:
        return False, f"cannot run the compiler: {e}"
    log = f"$ {' '.join(cmd)}\n{out.stdout}{out.stderr}"
    return out.returncode == 0, log


def _tail(text: str) -> str:
    return text if len(text) <= LOG_CHARS else "..." + text[-LOG_CHARS:]


def _compile(name: str, source: str, extra_cflags: list[str] | None = None,
             openmp: bool = True) -> tuple[Path, str]:
    """Compiles (or finds in the cache) lib<name>.so, nothing checked but the name and, for
    candidate code, the flags. Returns (path, build log)."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(f"cpu_ext: name {name!r} must be a C identifier")
    if not _evaluator_called():
        _refuse_flags(name, extra_cflags)
    cxx = compiler()
    flags = [*BASE_FLAGS, *(extra_cflags or [])]
    key_text = "\0".join([name, source, " ".join(flags), str(openmp), _compiler_version(cxx),
                          _cpu_model()])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:32]
    out_dir = cache_root() / "cpu_ext" / key
    lib_path = out_dir / f"lib{name}.so"
    log_path = out_dir / "build.log"
    if lib_path.exists():
        return lib_path, log_path.read_text(errors="replace") if log_path.exists() else ""
    out_dir.mkdir(parents=True, exist_ok=True)
    # every file of this build its own until published: workers starting together on a
    # fresh cache build the same slot at once (a shared source file rewritten under another
    # worker's compiler gave it an empty library)
    fd, src_tmp = tempfile.mkstemp(prefix=f"{name}.", suffix=".cpp", dir=out_dir)
    with os.fdopen(fd, "w") as f:
        f.write(source)
    fd, tmp = tempfile.mkstemp(prefix=f"lib{name}.", suffix=".so.tmp", dir=out_dir)
    os.close(fd)
    try:
        attempts = [[*flags, OPENMP_FLAG], flags] if openmp else [flags]
        logs: list[str] = []
        for attempt in attempts:
            ok, log = _run_compiler([cxx, *attempt, src_tmp, "-o", tmp])
            logs.append(log)
            if ok:
                log_path.write_text(log)
                os.replace(src_tmp, out_dir / f"{name}.cpp")
                _publish(tmp, lib_path)
                return lib_path, log
            if "omp" not in log.lower():  # not an OpenMP problem: retrying cannot help
                break
        raise CompileError(f"cpu_ext: {name}.cpp does not compile", _tail(logs[0]))
    finally:
        for left in (tmp, src_tmp):
            if os.path.exists(left):
                os.unlink(left)


def _publish(tmp: str, lib_path: Path) -> None:
    """Puts a finished build in its cache slot. The first build of a slot stays: a worker
    that already loaded it (workers starting together on a fresh cache all build) must not
    see its file replaced, which reads as tampering (tampered_builds)."""
    try:
        os.link(tmp, lib_path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        os.replace(tmp, lib_path)


def _evaluator_called() -> bool:
    """Whether the first frame outside this module and the standard library is the worker's
    own (pc_sample, kernel_log: fixed sources of the evaluator). Anything else, a thread
    started on build() included, is candidate code."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return frame is not None and not library_reach._candidate_caller(frame)


def _entry_points() -> tuple[Callable[..., tuple[Path, str]], Callable[..., Library],
                             Callable[[str], bool], Callable[[], list[dict[str, str]]]]:
    """build, load, checked_library and tampered_builds over one record of the libraries
    cpu_ext built or checked in this worker, held in vaults (vault.py): candidate code can
    read whether a file is in it, not add one; only record(), called by build() or load()
    after their checks, adds."""
    def recording(frame: Any) -> bool:
        return frame.f_code is record.__code__ and frame.f_back is not None and \
            frame.f_back.f_code in (build.__code__, load.__code__)

    checked = Vault(recording)
    # the evaluator's own builds (the sampler, the log); tampered_builds removes
    own = Vault(lambda frame: recording(frame) or frame.f_code is tampered_builds.__code__)

    def identity(path: str) -> tuple[int, ...] | None:
        """The file's identity: a write, a rename over it or a reset modification time all
        change its change time (st_ctime), which no call can set back."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def record(path: Path, evaluator: bool = False) -> None:
        real = os.path.realpath(path)
        if (ident := identity(real)) is not None:
            checked.put(real, ident)
            if evaluator:
                own.put(real, ident)

    def tampered_builds() -> list[dict[str, str]]:
        """evaluator_tampering for each of the evaluator's own builds whose file changed since
        this worker built or loaded it (the cache is shared by the workers: a library put in
        its place would be loaded by the next one). The file is removed, so the next worker
        builds it again."""
        changed = [path for path, ident in own.items() if identity(path) != ident]
        for path in changed:
            own.pop(path)
            with contextlib.suppress(OSError):
                os.unlink(path)
        return [finding("evaluator_tampering", f"the evaluator's compiled library {path} changed "
                        "on disk during the request (the build cache is shared by the workers); "
                        "it was removed and is built again by the next worker", "reject")
                for path in changed]

    def checked_library(path: str) -> bool:
        """Whether `path` is a library cpu_ext built for the evaluator or checked for the
        candidate in this worker, and the file is still the one it checked."""
        real = os.path.realpath(path)
        ident = checked.get(real)
        return ident is not None and ident == identity(real)

    def build(name: str, source: str, extra_cflags: list[str] | None = None,
              openmp: bool = True) -> tuple[Path, str]:
        """Compiles (or finds in the cache) lib<name>.so. Returns (path, build log). Called
        by candidate code, runs load()'s checks (raises LibraryCodeError)."""
        path, log = _compile(name, source, extra_cflags, openmp)
        evaluator = _evaluator_called()
        if not evaluator:
            _refuse_library_code(name, path, source, log)
        record(path, evaluator)
        return path, log

    def load(name: str, source: str, functions: dict[str, str],
             extra_cflags: list[str] | None = None, openmp: bool = True) -> Library:
        """Compiles `source` (cached) and returns a Library exposing `functions`
        ({exported C name: signature}). Raises CompileError (compiler log in `.log`),
        LibraryCodeError (library_code.py, library_reach.py, compile_flags.py) or ValueError
        (bad name/signature)."""
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError(f"cpu_ext.load: name {name!r} must be a C identifier")
        if not functions:
            raise ValueError("cpu_ext.load: declare at least one function in `functions`")
        sigs = {fn: parse_signature(sig) for fn, sig in functions.items()}
        path, log = _compile(name, source, extra_cflags, openmp)  # checks a candidate's flags
        _refuse_library_code(name, path, source, log)
        record(path)
        try:
            handle = ctypes.CDLL(str(path))
        except OSError as e:
            raise CompileError(f"cpu_ext: cannot load {path}: {e}", log) from e
        callers: dict[str, Callable[..., Any]] = {}
        for fn_name, sig in sigs.items():
            try:
                cfunc = getattr(handle, fn_name)
            except AttributeError as e:
                raise CompileError(
                    f"cpu_ext: {name}.cpp does not export {fn_name!r}; declare it "
                    f'extern "C" (C++ names are mangled otherwise)', log) from e
            callers[fn_name] = _make_caller(name, fn_name, cfunc, sig)
        return Library(name, path, log, callers)

    return build, load, checked_library, tampered_builds


build, load, checked_library, tampered_builds = _entry_points()


def _refuse_flags(name: str, extra_cflags: Any) -> None:
    """Raises LibraryCodeError (recorded) when extra_cflags hold more than code-generation
    flags and links against the runtime (compile_flags.py)."""
    found = compile_flags.flag_findings(extra_cflags)
    if not found:
        return
    what = (f"cpu_ext library {name!r}: extra_cflags refused: {'; '.join(found[:4])}; allowed "
            f"are {compile_flags.ALLOWED}")
    library_code.refuse(what)
    raise LibraryCodeError(what)


def _refuse_library_code(name: str, path: Path, source: str, log: str) -> None:
    """Raises LibraryCodeError (recorded for the evaluation's finding) when the built library
    imports, or its source names, the loader's lookup functions or BLAS/LAPACK routines, or
    depends on a library outside the runtime (library_reach.py)."""
    try:
        found = library_code.library_findings(path) + library_reach.import_findings(path)
    except library_code.ToolMissing as e:
        raise CompileError(f"cpu_ext: {e}", log) from e
    found += [f"{s} in the source" for s in library_code.source_findings(source)]
    if not found:
        return
    what = (f"cpu_ext library {name!r} reaches library code: {', '.join(found[:6])}; a "
            "kernel must compute with its own code, not call BLAS or look functions up at "
            "run time")
    library_code.refuse(what)
    raise LibraryCodeError(what)
