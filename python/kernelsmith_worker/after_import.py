"""Run code right after a module is first imported, by whoever imports it.

The worker hooks and watches some of torch's slower modules (torch.utils.cpp_extension
imports setuptools: about a second on a slow host) only when something imports them, instead
of importing them at start-up. `after_import(name, fn)` calls fn(module) once the module has
executed (at once if it already has), before the importing code's next statement.
Thread-safety: the worker imports and registers from its main thread.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable
from typing import Any

class _Loader(importlib.abc.Loader):
    """The module's own loader, then the callbacks registered for it."""

    def __init__(self, inner: Any, name: str, pending: list[Any]) -> None:
        self._inner = inner
        self._name = name
        self._pending = pending

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._inner.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__loader__ = self._inner  # the module sees its own loader (sources, resources)
        self._inner.exec_module(module)
        while self._pending:
            self._pending.pop(0)(module)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds a module with a callback through the other finders and wraps its loader. The
    callbacks live on this object (module-level data of the worker is watched for change)."""

    def __init__(self) -> None:
        self.pending: dict[str, list[Callable[[types.ModuleType], None]]] = {}

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        pending = self.pending.pop(name, None)
        if not pending:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, name, pending)
                else:  # an old-style loader, not wrapped: the callbacks keep waiting
                    self.pending[name] = pending
                return spec
        self.pending[name] = pending  # not found now: perhaps later
        return None


_FINDER = _Finder()


def after_import(name: str, fn: Callable[[types.ModuleType], None]) -> None:
    """Calls fn(module) once module `name` is imported: now if it is, else right after its
    first import. Callbacks run in the order they were registered."""
    module = sys.modules.get(name)
    if module is not None:
        fn(module)
        return
    _FINDER.pending.setdefault(name, []).append(fn)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
