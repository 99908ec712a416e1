"""Loading problem and candidate sources as fresh modules.

Each source is written to a real file under the scratch directory (the worker's cwd) and
imported with importlib under a unique module name: Triton's @jit and the interpreter read
kernel source through `inspect`, which needs a file. Each request gets new modules; they
are removed from sys.modules (and their files deleted) by `ModuleLoader.cleanup`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import shutil
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

from kernelsmith_worker import errors

PROBLEM_NAMES: tuple[str, ...] = ("Model", "get_inputs", "get_init_inputs")
CANDIDATE_NAMES: tuple[str, ...] = ("ModelNew",)


class LoadError(Exception):
    """A source could not be loaded. `status` is the EvalResult status it maps to."""

    def __init__(self, status: str, message: str, log_tail: str = "",
                 poisoned: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.log_tail = log_tail
        self.poisoned = poisoned


@dataclass
class Problem:
    path: str
    sha256: str
    module: types.ModuleType
    Model: type
    get_inputs: Callable[[], Any]
    get_init_inputs: Callable[[], Any]


@dataclass
class Candidate:
    path: str
    source: str
    module: types.ModuleType
    ModelNew: type


def syntax_error_message(kind: str, path: str, e: BaseException) -> str | None:
    """For a SyntaxError (IndentationError, TabError) raised by the source itself: the message
    naming `path` (not the scratch copy), the line, the column and the offending text; else
    None."""
    if not isinstance(e, SyntaxError) or e.lineno is None:
        return None
    where = f"{path}, line {e.lineno}" + (f", column {e.offset}" if e.offset else "")
    text = (e.text or "").rstrip("\n")
    shown = f": `{text.strip()}`" if text.strip() else ""
    return (f"{kind} {where}: {type(e).__name__}: {e.msg}{shown}; fix the Python syntax at line "
            f"{e.lineno} of {path}")


def read_source(path: str, source: str | None) -> str:
    """The request's inline source, else the file at `path`. Raises OSError."""
    if source is not None:
        return source
    with open(path, encoding="utf-8") as f:
        return f.read()


class ModuleLoader:
    """Imports sources under `scratch/ks_src/<n>/<basename>`. Not thread-safe."""

    def __init__(self, scratch: Path) -> None:
        self._root = scratch / "ks_src"
        self._counter = itertools.count()
        self._loaded: list[tuple[str, Path]] = []

    def _import(self, kind: str, path: str, source: str) -> types.ModuleType:
        n = next(self._counter)
        modname = f"ks_{kind}_{os.getpid()}_{n}"
        base = os.path.basename(path) or f"{kind}.py"
        if not base.endswith(".py"):
            base += ".py"
        folder = self._root / str(n)
        folder.mkdir(parents=True, exist_ok=True)
        file = folder / base
        file.write_text(source, encoding="utf-8")
        self._loaded.append((modname, folder))
        spec = importlib.util.spec_from_file_location(modname, file)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot create an import spec for {file}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        spec.loader.exec_module(module)
        return module

    def load_problem(self, path: str, source: str | None) -> Problem:
        """Raises LoadError(infra_error) naming the file and what is wrong with it."""
        try:
            text = read_source(path, source)
        except OSError as e:
            raise LoadError("infra_error", f"problem {path}: cannot read: {e}") from e
        try:
            module = self._import("problem", path, text)
        except BaseException as e:  # noqa: BLE001 - problem code may raise anything
            message = syntax_error_message("problem", path, e)
            raise LoadError("infra_error",
                            message or f"problem {path} does not import: {errors.describe(e)}",
                            errors.traceback_tail(e), errors.is_cuda_poison(e)) from e
        missing = [n for n in PROBLEM_NAMES if not hasattr(module, n)]
        if missing:
            raise LoadError("infra_error",
                            f"problem {path} does not define {', '.join(missing)} "
                            f"(a KernelBench problem defines {', '.join(PROBLEM_NAMES)})")
        return Problem(path, hashlib.sha256(text.encode()).hexdigest(), module, module.Model,
                       module.get_inputs, module.get_init_inputs)

    def load_candidate(self, path: str, source: str | None) -> Candidate:
        """Raises LoadError(compile_error) with the traceback/compiler log tail, or
        LoadError(runtime_error) when importing broke the CUDA context."""
        try:
            text = read_source(path, source)
        except OSError as e:
            raise LoadError("infra_error", f"candidate {path}: cannot read: {e}") from e
        try:
            module = self._import("candidate", path, text)
        except BaseException as e:  # noqa: BLE001 - candidate code may raise anything
            if errors.is_cuda_poison(e):
                raise LoadError("runtime_error",
                                f"importing the candidate failed: {errors.describe(e)}",
                                errors.traceback_tail(e), True) from e
            tail = errors.log_tail(e) if errors.is_compile_failure(e) else ""
            tb = errors.traceback_tail(e)
            message = syntax_error_message("candidate", path, e)
            raise LoadError("compile_error",
                            message or f"candidate does not import: {errors.describe(e)}",
                            (tail + "\n" + tb).strip() if tail and tail not in tb else tb) from e
        if not isinstance(getattr(module, "ModelNew", None), type):
            raise LoadError("compile_error",
                            f"candidate {path} does not define class ModelNew")
        return Candidate(path, text, module, module.ModelNew)

    def cleanup(self) -> None:
        """Forgets this request's modules and deletes their files."""
        for modname, folder in self._loaded:
            sys.modules.pop(modname, None)
            shutil.rmtree(folder, ignore_errors=True)
        self._loaded.clear()
