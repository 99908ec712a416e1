"""Recording the custom kernels a candidate launches.

The worker loop owns one `LaunchRecorder` and installs it with `install()` before any
candidate is imported. The hooks count:
- Triton launches: `JITFunction.run` (compiled mode) and `InterpretedFunction.run`
  (TRITON_INTERPRET=1). `kernel[grid](...)`, `Autotuner` and `Heuristics` all end in one of
  these, so each launch is counted once, by the kernel's Python name. Warm-up calls (compile
  only) are not launches.
- cpu_ext calls: `cpu_ext` wraps every foreign function in `recorder.launch(...)`.
- CUDA C++ sources handed to `load_inline` (backends/cuda.py) are kept for kernel-name
  matching in the profiler.

While a launch is in progress `in_kernel()` is true, so the dispatch-level audit does not
mistake the launcher's own bookkeeping (the interpreter copies storages with torch ops) for
the candidate computing with torch.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from collections.abc import Callable

from kernelsmith_worker import interpreted_body

_perf_counter_ns = time.perf_counter_ns  # captured before any candidate can patch it


class LaunchRecorder:
    """Counts custom-kernel launches and the host time spent inside them. Not thread-safe."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.inside_ns: int = 0
        self.inline_sources: list[str] = []
        self._depth = 0

    def reset(self, *, keep_sources: bool = True) -> None:
        """Forgets launches (kept: CUDA sources seen this request, unless keep_sources=False)."""
        self.counts = Counter()
        self.inside_ns = 0
        self._depth = 0
        if not keep_sources:
            self.inline_sources = []

    @contextmanager
    def launch(self, name: str) -> Iterator[None]:
        """Counts one launch of `name`; the time inside the outermost launch accumulates."""
        self.counts[name] += 1
        self._depth += 1
        start = _perf_counter_ns() if self._depth == 1 else 0
        try:
            yield
        finally:
            if self._depth == 1:
                self.inside_ns += _perf_counter_ns() - start
            self._depth -= 1

    def recount(self, name: str, actual: str | None) -> None:
        """The last launch counted as `name` was of `actual` (the compiled kernel's name), or
        ran nothing (None: a grid of zero programs)."""
        if self.counts[name] > 0:
            self.counts[name] -= 1
            if self.counts[name] == 0:
                del self.counts[name]
        if actual:
            self.counts[actual] += 1

    def in_kernel(self) -> bool:
        return self._depth > 0

    def total(self) -> int:
        return sum(self.counts.values())

    def names(self) -> list[str]:
        return sorted(self.counts)


class _Installed:
    """The recorder the hooks report to (one per process: the worker loop's)."""
    __evaluator_state__ = True  # the evaluator's running state (data_watch.py)

    recorder: LaunchRecorder | None = None
    triton_patched: bool = False


def active_recorder() -> LaunchRecorder | None:
    """The recorder installed by the worker loop, or None outside a worker."""
    return _Installed.recorder


def _kernel_name(fn_obj: Any) -> str:
    fn = getattr(fn_obj, "fn", None)
    name = getattr(fn, "__name__", None) or getattr(fn_obj, "__name__", None)
    return str(name) if name else type(fn_obj).__name__


def _empty_grid(grid: Any) -> bool:
    """A static grid with no programs (a launch that runs nothing); False when unknown."""
    if isinstance(grid, (tuple, list)):
        try:
            return any(int(g) == 0 for g in grid)
        except (TypeError, ValueError):
            return False
    return False


def _wrap_run(orig: Callable[..., Any]) -> Callable[..., Any]:
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        rec = _Installed.recorder
        if rec is None or kwargs.get("warmup", False):
            return orig(self, *args, **kwargs)
        name = _kernel_name(self)
        grid = kwargs.get("grid")
        if callable(grid):  # the grid Triton computes from the arguments: seen here
            seen: list[Any] = []

            def traced(meta: Any, _grid: Callable[..., Any] = grid) -> Any:
                seen.append(_grid(meta))
                return seen[-1]
            kwargs["grid"] = traced
        with rec.launch(name):
            out = orig(self, *args, **kwargs)
        if callable(grid):
            grid = seen[-1] if seen else None
        # what the device runs: the compiled kernel's name (not the Python function's
        # writable __name__ of the moment), and nothing for a grid of zero programs
        actual = getattr(out, "name", None)
        if _empty_grid(grid):
            rec.recount(name, None)
        elif isinstance(actual, str) and actual and actual != name:
            rec.recount(name, actual)
        return out

    run.__wrapped__ = orig  # type: ignore[attr-defined]
    run.__ks_hook__ = True  # type: ignore[attr-defined]
    return run


def _patch_triton() -> bool:
    try:
        from triton.runtime.jit import JITFunction
    except Exception:
        return False
    if not getattr(JITFunction.run, "__ks_hook__", False):
        JITFunction.run = _wrap_run(JITFunction.run)  # type: ignore[method-assign]
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except Exception:
        return True
    if not getattr(InterpretedFunction.run, "__ks_hook__", False):
        InterpretedFunction.run = _wrap_run(InterpretedFunction.run)  # type: ignore[method-assign]
    interpreted_body.install()  # the kernel bodies it runs as Python: not host calls
    return True


def install(recorder: LaunchRecorder) -> bool:
    """Routes launch hooks to `recorder`; patches Triton once. Returns whether Triton is hooked."""
    _Installed.recorder = recorder
    if not _Installed.triton_patched:
        _Installed.triton_patched = _patch_triton()
    return _Installed.triton_patched
