"""The worker's own data watched by value: module data, class data and function defaults.

A candidate can change what the evaluation relies on without replacing any function: give a
function other defaults (`time_pair.__kwdefaults__["config"]`: a timing without checks), set a
class attribute that gates a check (`RotatingInputs.checked = False`), or overwrite, through
ctypes, the value inside a float object a tolerance table holds (a deep copy of the table
shares that float object, so comparing the table with its copy finds nothing). `DataWatch`,
taken with the integrity snapshot before any candidate code runs, keeps each such value as
its pickled bytes and compares bytes:

- module-level data of the worker's modules that compares equal to its deep copy (tables,
  constants; objects that hold the evaluator's own running state compare by identity and are
  the integrity guard's);
- class-level data of the worker's classes whose values are plain (numbers, strings, None,
  and tuples, lists, sets and dicts of them: the defaults of dataclass fields, flags),
  except in classes that hold the evaluator's running state (`__evaluator_state__ = True`);
- `__defaults__` and `__kwdefaults__` of the worker's functions and methods.

`restore()` puts the original objects back; a value whose original object itself was
overwritten cannot be put back (other code holds that object too), and is reported so that
the worker is replaced.
"""

from __future__ import annotations

import pickle
import sys
import types
from typing import Any

_PLAIN = (int, float, str, bytes, bool, type(None))


def fingerprint(val: Any) -> bytes | None:
    """The value's pickled bytes (None where it does not pickle)."""
    try:
        return pickle.dumps(val, protocol=4)
    except Exception:  # noqa: BLE001 - not picklable: watched by identity elsewhere
        return None


def _plain(val: Any, depth: int = 0) -> bool:
    if isinstance(val, _PLAIN):
        return True
    if depth > 3:
        return False
    if isinstance(val, (tuple, list, frozenset, set)):
        return all(_plain(v, depth + 1) for v in val)
    if isinstance(val, dict):
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in val.items())
    return False


def _own_modules(prefix: str) -> list[tuple[str, types.ModuleType]]:
    return [(name, mod) for name, mod in sorted(sys.modules.items())
            if mod is not None and (name == prefix or name.startswith(prefix + "."))]


class DataWatch:
    """See the module docstring. Not thread-safe (the worker is serial)."""

    def __init__(self, prefix: str, module_data: list[tuple[str, Any, str]]) -> None:
        """`module_data`: (label, module, attr) of the module-level data the integrity guard
        watches and whose deep copy compares equal."""
        # (label, owner, attr, original object, its bytes)
        self._values: list[tuple[str, Any, str, Any, bytes]] = []
        for label, mod, attr in module_data:
            self._add(label, mod, attr, vars(mod)[attr])
        # (label, function, original defaults, copy of the original kwdefaults, their bytes)
        self._defaults: list[tuple[str, Any, Any, Any, bytes]] = []
        for modname, mod in _own_modules(prefix):
            for name, val in sorted(vars(mod).items()):
                if isinstance(val, types.FunctionType) and val.__module__ == modname:
                    self._add_defaults(f"{modname}.{name}", val)
                if not isinstance(val, type) or val.__module__ != modname:
                    continue
                state = vars(val).get("__evaluator_state__", False)
                for attr, member in sorted(vars(val).items()):
                    fn = getattr(member, "__func__", member)
                    if isinstance(fn, types.FunctionType):
                        self._add_defaults(f"{modname}.{name}.{attr}", fn)
                    elif not state and not attr.startswith("__") and _plain(member):
                        self._add(f"{modname}.{name}.{attr}", val, attr, member)

    def _add(self, label: str, owner: Any, attr: str, val: Any) -> None:
        fp = fingerprint(val)
        if fp is not None:
            self._values.append((label, owner, attr, val, fp))

    def _add_defaults(self, label: str, fn: Any) -> None:
        kw = fn.__kwdefaults__
        fp = fingerprint((fn.__defaults__, kw))
        if fp is not None:
            self._defaults.append((label, fn, fn.__defaults__, None if kw is None else dict(kw),
                                   fp))

    @staticmethod
    def _now(owner: Any, attr: str) -> Any:
        return vars(owner).get(attr, _GONE)

    def changes(self) -> list[str]:
        """'label ...' for each value that differs from the snapshot."""
        out: list[str] = []
        for label, owner, attr, _, fp in self._values:
            if fingerprint(self._now(owner, attr)) != fp:
                out.append(f"{label} changed value")
        for label, fn, _, _, fp in self._defaults:
            if fingerprint((fn.__defaults__, fn.__kwdefaults__)) != fp:
                out.append(f"{label}'s default arguments changed")
        return out

    def restore(self) -> list[str]:
        """Puts the original objects back; lists what stays wrong (the worker is replaced)."""
        failed: list[str] = []
        for label, owner, attr, val, fp in self._values:
            try:
                if self._now(owner, attr) is not val:
                    setattr(owner, attr, val)
                if fingerprint(val) != fp:  # the original object itself was overwritten
                    failed.append(f"{label}: its value was overwritten in place")
            except Exception as e:  # noqa: BLE001 - reported: the worker is replaced
                failed.append(f"{label}: {type(e).__name__}: {e}")
        for label, fn, defaults, kw, fp in self._defaults:
            try:
                fn.__defaults__ = defaults
                fn.__kwdefaults__ = None if kw is None else dict(kw)
                if fingerprint((fn.__defaults__, fn.__kwdefaults__)) != fp:
                    failed.append(f"{label}: its default values were overwritten in place")
            except Exception as e:  # noqa: BLE001 - reported: the worker is replaced
                failed.append(f"{label}: {type(e).__name__}: {e}")
        return failed


_GONE = object()
