"""Classifying exceptions raised by candidate or problem code.

Pure helpers: which exceptions mean "does not compile", which mean "the CUDA context may be
corrupt", and how to turn an exception into a one-line message and a traceback tail.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator

# Substrings of an exception's text after which the CUDA context cannot be trusted.
CUDA_POISON_MARKERS: tuple[str, ...] = (
    "illegal memory access",
    "device-side assert",
    "unspecified launch failure",
    "CUDA error",
    "illegal instruction",
    "misaligned address",
)

# Exception type names (anywhere in the cause chain) that mean the kernel did not compile.
_COMPILE_ERROR_TYPES: frozenset[str] = frozenset(
    {
        "SyntaxError",
        "IndentationError",
        "TabError",
        "CompilationError",  # triton.compiler.errors.CompilationError
        "CompileTimeAssertionFailure",
        "UnsupportedLanguageConstruct",
        "CompileError",  # kernelsmith_worker.cpu_ext.CompileError
        "OutOfResources",  # triton: shared memory / registers exceeded at compile time
    }
)

# Text that marks a failed torch.utils.cpp_extension build.
_BUILD_FAILURE_MARKERS: tuple[str, ...] = ("Error building extension", "ninja: build stopped")

TAIL_CHARS = 4000
MESSAGE_CHARS = 500


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """Yields exc, then its __cause__/__context__ chain (each exception once)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ if cur.__cause__ is not None else cur.__context__


def _text(exc: BaseException) -> str:
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:  # a candidate's exception whose __str__ raises
        return type(exc).__name__


def text_is_cuda_poison(text: str) -> bool:
    """True when an error text says the CUDA context may be corrupt."""
    return any(marker in text for marker in CUDA_POISON_MARKERS)


def is_cuda_poison(exc: BaseException) -> bool:
    """True when the exception says the CUDA context may be corrupt."""
    return any(text_is_cuda_poison(_text(e)) for e in exception_chain(exc))


def is_compile_failure(exc: BaseException) -> bool:
    """True when the exception says a kernel (Triton, CUDA C++, cpu_ext C++) did not compile."""
    for e in exception_chain(exc):
        if type(e).__name__ in _COMPILE_ERROR_TYPES:
            return True
        if any(marker in _text(e) for marker in _BUILD_FAILURE_MARKERS):
            return True
    return False


def describe(exc: BaseException, limit: int = MESSAGE_CHARS) -> str:
    """One line: `Type: text`, whitespace collapsed, capped at `limit` characters."""
    line = " ".join(_text(exc).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def traceback_tail(exc: BaseException, limit: int = TAIL_CHARS) -> str:
    """The formatted traceback (with causes), keeping its last `limit` characters."""
    try:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:
        text = _text(exc)
    return text if len(text) <= limit else "..." + text[-(limit - 3) :]


def log_tail(exc: BaseException, limit: int = TAIL_CHARS) -> str:
    """Compiler output carried by the exception (cpu_ext.CompileError.log), else its text."""
    for e in exception_chain(exc):
        log = getattr(e, "log", None)
        if isinstance(log, str) and log:
            return log if len(log) <= limit else "..." + log[-(limit - 3) :]
    text = _text(exc)
    return text if len(text) <= limit else "..." + text[-(limit - 3) :]
