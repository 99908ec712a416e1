"""Kernel bodies run by Triton's interpreter, outside the host-call watch's profile function.

Under TRITON_INTERPRET=1 Triton runs every program of a launch as Python: `GridExecutor`
calls the kernel's rewritten function once per program. On a GPU that body is compiled device
code and no Python runs in it; in the interpreter the host-call watch (event_watch.EventWatch
with host_calls, on sys.setprofile) would see each of the many calls the interpreter makes,
which is most of an interpreted evaluation's time. `install` wraps the function GridExecutor
calls per program: the thread's profile function is off while a body runs and back as it
was after it. The launcher around the bodies (argument copies, the grid callable, pre-run
hooks) stays watched, as it runs as Python on a GPU too; the audit hook and the dispatch-level
audit see the bodies as before. Without TRITON_INTERPRET nothing is patched.

    interpreted_body.install()   # when launches.py hooks Triton
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Any

# captured at worker start, before any candidate could replace them in sys
_getprofile = sys.getprofile
_setprofile = sys.setprofile


class _Body:
    """The kernel's rewritten function as GridExecutor reads it (its globals, where Triton
    patches triton.language; its signature and annotations; its name), called with the
    thread's profile function off."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__wrapped__ = fn
        self.__globals__ = fn.__globals__
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__annotations__ = getattr(fn, "__annotations__", {})
        self.__signature__ = inspect.signature(fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        watching = _getprofile()
        if watching is None:
            return self.fn(*args, **kwargs)
        _setprofile(None)
        try:
            return self.fn(*args, **kwargs)
        finally:
            _setprofile(watching)


def _interpreting() -> bool:
    """TRITON_INTERPRET as Triton reads it: on a GPU the interpreter is not patched."""
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "on", "yes")


def install() -> bool:
    """Wraps the per-program function of Triton's interpreter (once, at worker start, and only
    under TRITON_INTERPRET). Returns whether it is wrapped."""
    if not _interpreting():
        return False
    try:
        from triton.runtime.interpreter import GridExecutor
    except Exception:  # noqa: BLE001 - a Triton without the interpreter has no bodies to run
        return False
    init = GridExecutor.__init__
    if getattr(init, "__ks_hook__", False):
        return True

    def __init__(self: Any, fn: Any, *args: Any, **kwargs: Any) -> None:
        init(self, fn, *args, **kwargs)
        try:
            self.fn = _Body(self.fn)
        except Exception:  # noqa: BLE001 - a function it cannot stand for: left watched
            pass

    __init__.__wrapped__ = init  # type: ignore[attr-defined]
    __init__.__ks_hook__ = True  # type: ignore[attr-defined]
    GridExecutor.__init__ = __init__  # type: ignore[method-assign]
    return True
