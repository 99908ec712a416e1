"""The one replacement of a torch function the evaluator accepts: torch's own dynamo wrapper.

Importing torch._dynamo (a candidate may: torch.compile does) rebinds `torch.manual_seed` to
`torch._disable_dynamo(torch.manual_seed)`, a function that calls the original with dynamo
switched off. The worker's integrity snapshot is taken without dynamo loaded (its import
takes seconds), so the watches (integrity.IntegrityGuard, process_state.ProcessState) accept
exactly that wrapper around the very original, and nothing else. The worker's own seeding
calls the original, bound when its modules were imported.
Thread-safety: pure functions.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import torch


def code_of(obj: Any) -> Any:
    """The code object of a function or method (None for anything else)."""
    fn = getattr(obj, "__func__", obj)
    return getattr(fn, "__code__", None)


# Taken when the worker's modules are imported, before any candidate can replace
# torch._disable_dynamo.
_WRAPPER_CODE = code_of(torch._disable_dynamo(lambda: None))


def _cell(fn: types.FunctionType, name: str) -> Any:
    """The closure variable `name` of fn, or None."""
    try:
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        return cells[name].cell_contents
    except (KeyError, ValueError):
        return None


def _dynamo_disabled(disable: Any, original: Any) -> bool:
    """`disable` is what the wrapper caches on the original at its first call:
    torch._dynamo.disable(original) itself (dynamo is loaded then)."""
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is None or not isinstance(disable, types.FunctionType):
        return False
    reference = code_of(dynamo.disable(lambda: None, True, wrapping=False))
    return code_of(disable) is reference and _cell(disable, "fn") is original


def redirected(original: Any) -> bool:
    """Something other than dynamo's own disable of `original` sits in the attribute the
    wrapper calls through: set while no wrapper is in place, it would take over the first
    wrapper torch puts on `original` (in a later request)."""
    cached = getattr(original, "__dict__", {}).get("__dynamo_disable")
    return cached is not None and not _dynamo_disabled(cached, original)


def is_disable_wrapper(current: Any, original: Any) -> bool:
    """`current` is torch._disable_dynamo's wrapper around `original` itself, and no attribute
    set on the original redirects the wrapper's call."""
    if not isinstance(current, types.FunctionType) or code_of(current) is not _WRAPPER_CODE \
            or _cell(current, "fn") is not original:
        return False
    return not redirected(original)
