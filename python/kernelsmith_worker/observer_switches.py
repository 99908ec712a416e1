"""torch's switches of what the audit observes, known by identity.

The audit sees the torch work of a candidate's forward through two of torch's own observers:
a dispatch mode (opclass.OpCounter, on the Python dispatch key) and the profiler (built on
RecordFunction callbacks). torch has private functions that switch each of them off for the
calling thread (`_enable_record_function(False)`, `_DisableTorchDispatch`, excluded dispatch
keys, popped or replaced modes), that hand out the observer itself (`_get_dispatch_stack_at`)
or that tell a watched or captured call from another (the mode stacks' lengths, the dispatch
key sets, `_cuda_isCurrentStreamCapturing`, `sys.getprofile`). A kernel has no use for any of
them. The audit's host-call watch (event_watch.EventWatch with host_calls) sees every call
candidate code makes: a call of one of these, by whatever name or alias it was reached (the
function object is compared, not its spelling), is `evaluator_introspection`; torch's own
calls (from torch's files) are torch's.

A C function called from C (functools.partial, map, operator.call) raises no profile event,
so `install` also puts a Python function of the worker's in place of each switch function,
in torch._C, torch._C._autograd and every torch module that bound it by name: whatever route
reaches it runs that function's frame, which the watch sees. The originals are held where
candidate code cannot read them (a running generator's local, as vault.py keeps records),
and only that function's frames may have one called. The guard classes
(`_DisableTorchDispatch`, ...) are left as they are: an instance's type is the class itself.

    observer_switches.collect(); observer_switches.install()   # at worker start
    observer_switches.builtin(fn)      # what it does, for a C function candidate code called
    observer_switches.python(frame)    # what it does, for a Python function's frame
"""

from __future__ import annotations

import inspect
import re
import sys
import threading
from collections.abc import Generator
from typing import Any

import torch

# torch._C (and its _autograd submodule): names that switch off, replace or read the
# dispatch-mode and profiler observers, or read the capture state
_C_NAMES = re.compile(
    r"^_(?:dispatch_tls_\w+|len_torch_(?:dispatch|function)_stack|get_dispatch_stack_at"
    r"|get_function_stack_at|pop_torch_(?:dispatch|function)_stack"
    r"|push_on_torch_(?:dispatch|function)_stack|set_dispatch_mode|unset_dispatch_mode"
    r"|get_dispatch_mode|DisableTorchDispatch|DisableTorchFunction\w*|DisableFuncTorch"
    r"|ExcludeDispatchKeyGuard|IncludeDispatchKeyGuard|EnablePythonDispatcher"
    r"|DisablePythonDispatcher|PreserveDispatchKeyGuard|cuda_isCurrentStreamCapturing"
    r"|is_torch_function_mode_enabled|is_torch_function_enabled|dispatch_call_boxed)$")
# methods of torch._C classes that enter the dispatcher below the Python key (a boxed
# redispatch: neither the dispatch mode nor RecordFunction sees the op)
_METHODS = (("_DispatchOperatorHandle", ("redispatch_boxed",)),)
_AUTOGRAD_NAMES = re.compile(r"record_function|profiler|collection")
_AUTOGRAD_KEEP = re.compile(r"^_record_function_(?:enter|exit)")  # what record_function() does
# torch's Python functions over the same switches, and the interpreter's profile/trace hooks
# (whose presence tells the audit's watched call from the others)
_PYTHON = (
    ("torch.cuda.graphs", ("is_current_stream_capturing",)),
    ("torch._ops", ("OpOverload.redispatch",)),
    ("torch.utils._python_dispatch", ("_get_current_dispatch_mode", "_disable_current_modes",
                                      "_get_current_dispatch_mode_stack", "_pop_mode",
                                      "_pop_mode_temporarily", "_push_mode",
                                      "is_in_torch_dispatch_mode", "any_torch_dispatch_mode_on")),
    ("torch.overrides", ("_get_current_function_mode", "_get_current_function_mode_stack",
                         "_pop_mode", "_pop_mode_temporarily", "_push_mode")),
    ("torch.autograd.profiler", ("profile.__enter__", "profile.__exit__", "profile.__init__",
                                 "emit_nvtx.__enter__", "emit_itt.__enter__")),
    ("torch.profiler.profiler", ("profile.__enter__", "profile.start", "profile.stop",
                                 "_KinetoProfile.start", "_KinetoProfile.stop")),
)
_INTERPRETER = ((sys, ("getprofile", "gettrace")), (threading, ("getprofile", "gettrace")))


class _Table:
    __evaluator_state__ = True  # the evaluator's running state (data_watch.py)
    # id(fn) -> what: ids only (the originals stay alive in torch and in _keeper, and are
    # not kept where candidate code could read them)
    builtins: dict[int, str] = {}
    codes: dict[Any, str] = {}  # code object -> what
    standins: dict[str, int] = {}  # a stand-in's key -> id(original) (install)


def _what(name: str) -> str:
    if "redispatch" in name or "call_boxed" in name:
        return f"{name} (enters torch's dispatcher below the dispatch mode and the profiler)"
    if "capturing" in name.lower():
        return f"{name} (tells a CUDA graph capture, the timing stage, from other calls)"
    if "profil" in name or "record_function" in name or "collection" in name:
        return f"{name} (switches or reads the profiler the audit watches with)"
    return f"{name} (switches off or reads the dispatch mode the audit counts ops with)"


def collect() -> int:
    """Builds the table from the torch in this process (once, at worker start, before any
    candidate). Returns how many functions it holds."""
    if _Table.builtins or _Table.codes:
        return len(_Table.builtins) + len(_Table.codes)
    found: dict[int, str] = {}
    for owner, pattern in ((torch._C, _C_NAMES), (torch._C._autograd, _AUTOGRAD_NAMES)):
        prefix = owner.__name__
        for name in dir(owner):
            if not pattern.search(name) or _AUTOGRAD_KEEP.search(name):
                continue
            fn = getattr(owner, name, None)
            if callable(fn):
                found[id(fn)] = _what(f"{prefix}.{name}")
    for cls_name, methods in _METHODS:
        cls = getattr(torch._C, cls_name, None)
        for name in methods:
            fn = vars(cls).get(name) if cls is not None else None
            if fn is not None:
                found[id(fn)] = _what(f"torch._C.{cls_name}.{name}")
    for module, names in _INTERPRETER:
        for name in names:
            fn = getattr(module, name, None)
            if fn is not None and not hasattr(fn, "__code__"):
                found[id(fn)] = (f"{module.__name__}.{name} (tells the audit's watched call "
                                 "from the others)")
    codes: dict[Any, str] = {}
    for module, paths in _PYTHON:
        try:
            mod = __import__(module, fromlist=["_"])
        except Exception:  # noqa: BLE001 - a torch without it has nothing to find there
            continue
        for path in paths:
            obj: Any = mod
            for part in path.split("."):
                obj = getattr(obj, part, None)
            # a @contextmanager function's own generator, not contextlib's shared wrapper
            code = getattr(inspect.unwrap(obj), "__code__", None) if obj is not None else None
            if code is not None and code.co_filename == getattr(mod, "__file__", None):
                codes[code] = _what(f"{module}.{path}")
    if hasattr(threading, "getprofile"):  # Python functions in threading
        for name in ("getprofile", "gettrace"):
            code = getattr(getattr(threading, name, None), "__code__", None)
            if code is not None:
                codes[code] = f"threading.{name} (tells the audit's watched call from the others)"
    _Table.builtins, _Table.codes = found, codes
    return len(found) + len(codes)


def builtin(fn: Any) -> str | None:
    """What the C function `fn` does, when it is one of the switches; else None."""
    return _Table.builtins.get(id(fn))


def python(frame: Any) -> str | None:
    """What the Python function running in `frame` does, when it is one of the switches or
    the worker's stand-in for one; else None."""
    if frame.f_code is _SWITCH_CODE:
        return _Table.builtins.get(_Table.standins.get(frame.f_locals.get("key"), 0)) or \
            "a switch of the audit's observers"
    return _Table.codes.get(frame.f_code)


def named_by(frame: Any, caller: Any) -> bool:
    """Whether the code running in `caller` names the switch running in `frame` (torch
    calling `_get_dispatch_stack_at(i)` in its own function), rather than calling back a
    function it was handed (torch's pytree.tree_map, a hook): then its caller chose it."""
    name = frame.f_code.co_name
    if frame.f_code is _SWITCH_CODE:
        name = str(frame.f_locals.get("key", "")).rsplit(".", 1)[-1]
    return name in caller.f_code.co_names


def _keeper() -> Generator[Any, tuple[str, Any, Any, Any], None]:
    """The originals of the switches install() replaced, as this generator's local: added
    only by install(), handed only to a stand-in's frame (code objects by identity)."""
    originals: dict[str, Any] = {}
    reply: Any = None
    while True:
        op, key, args, kwargs = yield reply
        asker = _getframe(1).f_code
        if op == "add" and asker is install.__code__:
            originals[key], reply = args, None
        elif op == "call" and asker is _SWITCH_CODE and key in originals:
            # handed to the stand-in's frame and called there, outside this generator: a
            # switch may run Python that calls another (a redispatched custom op)
            reply = (True, originals[key])
        else:
            reply = (False, PermissionError("torch's switches of the audit's observers are "
                                            "called through the worker's stand-ins only"))


_getframe = sys._getframe
_KEEPER = _keeper()
next(_KEEPER)
_LOCK = threading.Lock()  # one send at a time: a generator cannot be entered twice


def _standin(key: str, name: str) -> Any:
    def switch(*args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            ok, value = _KEEPER.send(("call", key, None, None))
        if not ok:
            raise value
        return value(*args, **kwargs)
    switch.__name__ = switch.__qualname__ = name
    return switch


_SWITCH_CODE = _standin("", "").__code__


def install() -> int:
    """Puts a stand-in in place of each switch function (not the classes) in torch._C,
    torch._C._autograd and every loaded torch module that bound it by name (once, at worker
    start, after collect()). Returns how many attributes were replaced."""
    if _Table.standins:
        return 0
    by_id: dict[int, Any] = {}
    originals: dict[int, Any] = {}
    for owner, pattern in ((torch._C, _C_NAMES), (torch._C._autograd, _AUTOGRAD_NAMES)):
        for name in dir(owner):
            fn = getattr(owner, name, None)
            if id(fn) in _Table.builtins and not isinstance(fn, type):
                originals[id(fn)] = fn
    methods: dict[int, tuple[Any, str]] = {}  # id(original) -> (its class, its name)
    for cls_name, names in _METHODS:
        cls = getattr(torch._C, cls_name, None)
        for name in names:
            fn = vars(cls).get(name) if cls is not None else None
            if fn is not None and id(fn) in _Table.builtins:
                originals[id(fn)], methods[id(fn)] = fn, (cls, name)
    for fid, fn in originals.items():
        key = f"{getattr(fn, '__module__', '') or ''}.{getattr(fn, '__name__', fid)}"
        _KEEPER.send(("add", key, fn, None))
        _Table.standins[key] = fid
        by_id[fid] = _standin(key, getattr(fn, "__name__", "switch"))
    replaced = 0
    for fid, (cls, name) in methods.items():  # a Python function on the class: a method
        setattr(cls, name, by_id[fid])
        replaced += 1
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "torch" or name.startswith(("torch.", "triton"))):
            continue
        for attr, value in list(vars(module).items()):
            standin = by_id.get(id(value))
            if standin is not None and originals[id(value)] is value:
                setattr(module, attr, standin)
                replaced += 1
    _Guard.is_excluded = getattr(torch._C, "_dispatch_tls_is_dispatch_key_excluded", None)
    _Guard.python_key = getattr(getattr(torch._C, "DispatchKey", None), "Python", None)
    return replaced


class _Guard:
    __evaluator_state__ = True  # the evaluator's running state (data_watch.py)
    is_excluded: Any = None  # the stand-in of torch._C._dispatch_tls_is_dispatch_key_excluded
    python_key: Any = None


def python_key_excluded() -> bool:
    """Whether this thread runs with torch's Python dispatch key excluded: a guard class
    (`_DisableTorchDispatch()`, an excluded-key guard; types, whose instances no profile event
    reports) is active, and the dispatch mode the audit counts ops with sees nothing."""
    if _Guard.is_excluded is None or _Guard.python_key is None:
        return False
    return bool(_Guard.is_excluded(_Guard.python_key))
