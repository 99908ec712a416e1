"""Library code a cpu_ext kernel must not reach: the dynamic loader and BLAS/LAPACK.

A cpu_ext library is the candidate's own kernel only if the work runs in its own code. One
that calls a BLAS GEMM (MKL's sgemm_ is exported by libtorch_cpu.so, OpenBLAS's by numpy's
libraries) or finds one at run time with dlopen/dlsym does the problem's work in a library,
as torch would. Two checks, both before the library is used:
- its undefined dynamic symbols (`nm -D --undefined-only`): the loader's lookup functions
  and BLAS/LAPACK/oneDNN entry points;
- its C++ source (comments aside), and the names and short strings of the candidate's Python
  code (a ctypes route to the same functions): the loader's functions and the routines by
  their linkable names (sgemm_, cblas_sgemm, mkl_*; a kernel of its own called `sgemm` is
  fine).

`refusals()` lists what cpu_ext refused to load in this process since `clear()`: the
evaluation turns any of them into a reject finding, whatever the candidate did with the error.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
from pathlib import Path

# Run-time symbol lookup: a way to call any library function without naming it to the linker.
LOADER_SYMBOLS: frozenset[str] = frozenset(
    """dlopen dlmopen dlsym dlvsym dl_iterate_phdr __libc_dlopen_mode __libc_dlsym
    __libc_dlvsym _dl_sym _dl_vsym _dl_open dladdr dladdr1 dlinfo _dl_find_object _r_debug
    _dl_debug_state""".split()
)

# What a kernel has no use for and a cheat does: handlers and signals that run code (its own,
# or a stalled interpreter) in the middle of the evaluator's work, timers, the interpreter's
# C API (the GIL held from a native thread), memory protections, other processes' memory, and
# other processes (one cloned to share the worker's memory computes beside the caller where no
# thread clock of the worker sees it).
# Not syscall(): libstdc++ 13's headers call it for futexes (std::thread, mutexes), so a
# handler installed through syscall(SYS_rt_sigaction) is not seen here.
PROCESS_CONTROL: frozenset[str] = frozenset(
    """signal sigaction __sigaction sigset bsd_signal sysv_signal __sysv_signal siginterrupt
    sigaltstack setitimer alarm ualarm timer_create timer_settime timerfd_create
    timerfd_settime pthread_sigmask sigprocmask raise kill killpg pthread_kill tgkill tkill
    sigqueue pthread_sigqueue signalfd sigwait sigwaitinfo sigtimedwait sigsuspend
    mprotect pkey_mprotect ptrace process_vm_readv process_vm_writev prctl
    fork vfork _Fork clone clone3 __clone __clone2 posix_spawn posix_spawnp execv execve
    execvp execvpe execl execle execlp fexecve system popen""".split()
)
_PYTHON_API_RE = re.compile(r"^_?Py[A-Z_]")

_BLAS_ROUTINES = (
    "gemm|gemmt|gemm3m|gemv|gbmv|symm|hemm|syrk|herk|syr2k|her2k|trmm|trsm|symv|hemv|sbmv|"
    "hbmv|spmv|hpmv|trmv|trsv|tbmv|tbsv|tpmv|tpsv|ger|geru|gerc|syr|syr2|her|her2|spr|spr2|"
    "hpr|hpr2|dot|dotu|dotc|axpy|axpby|scal|nrm2|asum|copy|swap|rot|rotg|rotm|rotmg|"
    "gesv|getrf|getrs|getri|potrf|potrs|potri|gesvd|gesdd|geqrf|orgqr|ormqr|syev|syevd|heev|"
    "heevd|gels|gelsd|trtrs|trtri"
)
# Fortran BLAS/LAPACK (sgemm_, dgetrf_, sgemm_batch_strided, ...), and the C interfaces and
# vendor libraries by prefix.
_LIBRARY_RE = re.compile(
    rf"^(?:[sdcz](?:{_BLAS_ROUTINES})(?:_batch\w*|_64)?_?|i[sdcz]amax_?|i[sdcz]amin_?|"
    r"sdsdot_?|dsdot_?)$"
    r"|^(?:cblas_|mkl_|MKL_|LAPACKE_|openblas_|bli_|dnnl_|mkldnn_|libxsmm_|cublas|cudnn|"
    r"zendnn_|armpl_)",
    re.IGNORECASE,  # MKL exports the Fortran names upper-case too (SGEMM, SGEMM_64)
)
# In source text only the names a linker or dlsym takes: Fortran names end in '_', MKL's
# aliases are upper case (a lower-case `sgemm` may be a kernel of the candidate's own).
_SOURCE_BLAS_RE = re.compile(
    rf"^(?:[sdcz](?:{_BLAS_ROUTINES})(?:_batch\w*|_64)?_|i[sdcz]ama[xn]_|sdsdot_|dsdot_)$"
    r"|^[SDCZI][A-Z0-9]+(?:_64)?_?$")  # upper case: MKL's aliases, not a kernel of one's own
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# forbidden()'s reasons
LOOKUP = "run-time symbol lookup"
PROCESS = "signals, timers, processes, system calls or memory protection"
PYTHON_API = "the interpreter's C API"
ROUTINE = "BLAS/LAPACK/vendor library routine"


def forbidden(symbol: str, in_source: bool = False) -> str | None:
    """Why `symbol` (a C name a library imports, or a name in source text when `in_source`)
    must not be reached by a kernel, or None."""
    name = symbol.split("@", 1)[0]
    if name in LOADER_SYMBOLS:
        return LOOKUP
    if not in_source and name in PROCESS_CONTROL:
        return PROCESS
    if not in_source and _PYTHON_API_RE.match(name):
        return PYTHON_API
    m = _LIBRARY_RE.search(name)
    if m and (not in_source or m.group(0) != name or _SOURCE_BLAS_RE.match(name)):
        return ROUTINE
    return None


class ToolMissing(RuntimeError):
    """`nm` (binutils) is not installed: a library cannot be checked, so it is not loaded."""


@functools.lru_cache(maxsize=64)
def _undefined(path: str, mtime_ns: int) -> tuple[str, ...]:
    try:
        out = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        raise ToolMissing(f"cannot run nm (binutils) to check {path}: {e}; install binutils")\
            from e
    if out.returncode != 0:
        raise ToolMissing(f"nm -D --undefined-only {path} failed: {out.stderr.strip()[:300]}")
    return tuple(line.split()[-1] for line in out.stdout.splitlines() if line.split())


def undefined_symbols(path: Path) -> tuple[str, ...]:
    """The dynamic symbols `path` (a shared library) imports. Raises ToolMissing."""
    return _undefined(str(path), path.stat().st_mtime_ns)


def library_findings(path: Path) -> list[str]:
    """'symbol (why)' for each forbidden symbol the library imports, and its machine code's
    own system call instructions."""
    found = {f"{s.split('@', 1)[0]} ({why})" for s in undefined_symbols(path)
             if (why := forbidden(s)) is not None}
    found.update(f"{insn} at {addr} (a system call made by the library's own machine code)"
                 for addr, insn in system_calls(path)[:3])
    return sorted(found)


# x86-64 syscall/sysenter/int 0x80, AArch64 svc: the kernel reached without libc's wrappers
# (whose names the import check sees).
_SYSCALL_INSN_RE = re.compile(
    r"^\s*([0-9a-f]+):\s+(syscall|sysenter|int\s+\$0x80|svc)\b", re.M)


@functools.lru_cache(maxsize=64)
def _system_calls(path: str, mtime_ns: int) -> tuple[tuple[str, str], ...]:
    try:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True,
                             text=True, timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        raise ToolMissing(f"cannot run objdump (binutils) to check {path}: {e}; install "
                          "binutils") from e
    if out.returncode != 0:
        raise ToolMissing(f"objdump -d {path} failed: {out.stderr.strip()[:300]}")
    return tuple((m.group(1), " ".join(m.group(2).split()))
                 for m in _SYSCALL_INSN_RE.finditer(out.stdout))


def system_calls(path: Path) -> tuple[tuple[str, str], ...]:
    """(address, instruction) of each system call instruction in the library's code."""
    return _system_calls(str(path), path.stat().st_mtime_ns)


_CXX_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def source_findings(source: str) -> list[str]:
    """'name (why)' for each forbidden name C++ source uses outside comments, as an
    identifier or inside a string (a dlsym'd name is a string)."""
    code = _CXX_COMMENT_RE.sub(" ", source)
    return sorted({f"{m} ({why})" for m in set(_IDENT_RE.findall(code))
                   if (why := forbidden(m, in_source=True)) is not None})


def python_findings(source: str) -> list[str]:
    """'line N: name (why)' for forbidden names in a candidate's Python code: identifiers,
    attributes and strings that are one name (`lib.sgemm_`, `getattr(lib, "sgemm_")`).
    Longer strings (C++ sources) are cpu_ext's to check when it builds them."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    hits: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and _IDENT_RE.fullmatch(node.value):
            name = node.value
        else:
            continue
        why = forbidden(name, in_source=True)
        if why is not None:
            hits.add(f"line {node.lineno}: {name} ({why})")
    return sorted(hits)


class _Refused:
    """What was refused in this evaluation. Kept on a class, not in module data, because the
    integrity guard takes a change of the worker's module data for tampering."""
    __evaluator_state__ = True  # the evaluator's running state (data_watch.py)

    items: list[str] = []


def refuse(what: str) -> None:
    """Records a refused library or lookup (for the evaluation's finding)."""
    _Refused.items.append(what)


def refusals() -> list[str]:
    return list(_Refused.items)


def clear() -> None:
    _Refused.items.clear()
