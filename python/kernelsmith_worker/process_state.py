"""Process state that changes what torch computes, outside any function the integrity guard
watches by identity: mode stacks, dispatch-key TLS, global nn.Module hooks and the kernels
registered in the dispatcher for aten ops.

A candidate that enters a TorchFunctionMode at import (and never leaves it) makes later
comparisons lie; one that re-registers `aten::mm` for CUDA or installs a global forward hook
slows the reference down or fakes its results, in this request and in every later request
the same worker serves. None of that replaces a Python function, so the state itself is
compared with a snapshot taken before any candidate code ran.

Below Python, native code can rewrite a library's relocation slots (got_guard.py): the
snapshot holds them too where the worker was started with LD_BIND_NOW.

`ProcessState.capture()` takes the snapshot. `quick_changes()` (about a millisecond: run
after each candidate call) compares the stacks, TLS, hooks and relocation slots; `changes()` adds the dispatch
table digest (about 0.1 s: run after import and at the end of each stage). `restore()` undoes
what can be undone (pops modes, clears hooks); a worker with such a change is replaced
anyway, since a dispatcher registration cannot be taken back reliably.
"""

from __future__ import annotations

import hashlib
import sys
import types
import warnings
from typing import Any

import torch
import torch.nn.modules.module as _module_mod

from kernelsmith_worker.dynamo_wrapper import is_disable_wrapper
from kernelsmith_worker.got_guard import GotGuard, bind_now
from kernelsmith_worker.opclass import OpCounter

# Dispatch keys whose kernels run real computations on the devices we time. Meta, Fake,
# functionalization and tracing keys are left out: lazily imported parts of torch register
# there without changing any computation.
_KEYS = ("CPU", "CUDA", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
         "CompositeExplicitAutogradNonFunctional", "Autograd", "AutogradCPU", "AutogradCUDA",
         "AutogradOther", "AutocastCUDA", "AutocastCPU", "BackendSelect", "ADInplaceOrView",
         "Python", "PythonTLSSnapshot", "PreDispatch", "PythonDispatcher")

_KEY_PREFIXES = tuple(k + ":" for k in _KEYS)  # a table line starts "CPU: registered at ..."

_len_function_stack = torch._C._len_torch_function_stack
_function_stack_at = torch._C._get_function_stack_at
_dispatch_stack_at = torch._C._get_dispatch_stack_at
_len_dispatch_stack = torch._C._len_torch_dispatch_stack
_pop_function_stack = torch._C._pop_torch_function_stack
_pop_dispatch_stack = torch._C._pop_torch_dispatch_stack
_include_set = torch._C._dispatch_tls_local_include_set
_exclude_set = torch._C._dispatch_tls_local_exclude_set
_function_enabled = torch._C._is_torch_function_enabled
_all_op_names = torch._C._dispatch_get_all_op_names
_dump_table = torch._C._dispatch_dump_table
_GONE = object()
_NEW = object()


def _global_hook_dicts() -> dict[str, Any]:
    """torch.nn.modules.module's `_global_*` hook registries (dicts), by name."""
    return {name: val for name, val in vars(_module_mod).items()
            if name.startswith("_global_") and isinstance(val, dict)}


def _hook_registry_state() -> dict[str, Any]:
    """Per registry: the object's identity, exact type and true size (dict.__len__, so a
    dict subclass lying about its length is seen), by name."""
    return {f"torch.nn.modules.module.{name}": (id(d), type(d).__qualname__, dict.__len__(d))
            for name, d in _global_hook_dicts().items()}


_CODE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
               types.MethodType, staticmethod, classmethod, property)


def _bindings() -> dict[tuple[int, str], tuple[Any, str, Any]]:
    """Every binding to code in torch's loaded modules and in the classes they define:
    (id of the namespace dict, key) -> (namespace owner, label, bound object). A candidate
    that rebinds `F` inside torch.nn.modules.linear or gives nn.Linear its own `__call__`
    replaces nothing the identity watch knows, but changes a binding here."""
    out: dict[tuple[int, str], tuple[Any, str, Any]] = {}
    with warnings.catch_warnings():  # isinstance on deprecated aliases warns
        warnings.simplefilter("ignore")
        _collect_bindings(out)
    return out


def _collect_bindings(out: dict[tuple[int, str], tuple[Any, str, Any]]) -> None:
    for name, mod in list(sys.modules.items()):
        if not (name == "torch" or name.startswith("torch.")) or \
                not isinstance(mod, types.ModuleType):
            continue
        for key, val in list(vars(mod).items()):
            if isinstance(val, _CODE_TYPES):
                out[(id(mod), key)] = (mod, f"{name}.{key}", val)
            if isinstance(val, type) and vars(val).get("__module__") == name:
                for ckey, cval in list(vars(val).items()):
                    if isinstance(cval, _CODE_TYPES):  # data (caches, flags) may change
                        out[(id(val), ckey)] = (val, f"{name}.{key}.{ckey}", cval)


def _class_keys(bindings: dict[tuple[int, str], tuple[Any, str, Any]]) -> dict[int, set[str]]:
    keys: dict[int, set[str]] = {}
    for (owner_id, key), (owner, _, _) in bindings.items():
        if isinstance(owner, type):
            keys.setdefault(owner_id, set()).add(key)
    return keys


def _dispatch_digest() -> str:
    """sha256 over the kernels registered for every aten/prims op at the computing keys."""
    h = hashlib.sha256()
    for name in sorted(n for n in _all_op_names() if n.startswith(("aten::", "prims::"))):
        try:
            table = _dump_table(name)
        except Exception:  # noqa: BLE001 - an op without a table
            continue
        h.update(name.encode())
        h.update("\n".join([ln for ln in table.split("\n") if ln.startswith(_KEY_PREFIXES)])
                 .encode())
    return h.hexdigest()


def _mode_names(depth: int, at: Any) -> list[str]:
    """Classes of the modes on a stack, the evaluator's own (exactly its OpCounter class, not
    a subclass or a class that only claims its module) left out."""
    out = []
    for i in range(depth):
        try:
            kind = type(at(i))
        except Exception:  # noqa: BLE001 - an infra mode slot
            continue
        if kind is not OpCounter:
            out.append(f"{kind.__module__}.{kind.__qualname__}")
    return out


def _quick() -> dict[str, Any]:
    fmodes = _mode_names(_len_function_stack(), _function_stack_at)
    dmodes = _mode_names(_len_dispatch_stack(), _dispatch_stack_at)
    ours = len(fmodes) < _len_function_stack() or len(dmodes) < _len_dispatch_stack()
    return {
        "torch function modes": fmodes,
        "torch dispatch modes": dmodes,
        "torch function handling enabled": _function_enabled(),
        # an evaluator mode on the stack adds the Python keys: compared only outside them
        "dispatch keys included (thread-local)": None if ours else str(_include_set()),
        "dispatch keys excluded (thread-local)": None if ours else str(_exclude_set()),
        **_hook_registry_state(),
    }


class ProcessState:
    """Snapshot of the state above; compare with `changes()`."""

    def __init__(self, quick: dict[str, Any], digest: str) -> None:
        self._quick = quick
        self._digest = digest
        self._hook_dicts = dict(_global_hook_dicts())
        self._hooks = {name: dict(d) for name, d in self._hook_dicts.items()}
        self._bindings = _bindings()
        self._class_keys = _class_keys(self._bindings)
        # the libraries' relocation slots (got_guard.py), where the loader binds at load
        self._got = GotGuard.capture() if bind_now() else None

    @classmethod
    def capture(cls) -> ProcessState:
        return cls(_quick(), _dispatch_digest())

    def _binding_changes(self) -> list[tuple[Any, str, str, Any]]:
        """(namespace owner, key, label, original or _NEW) for every binding that differs."""
        out: list[tuple[Any, str, str, Any]] = []
        for (_, key), (owner, label, val) in self._bindings.items():
            cur = vars(owner).get(key, _GONE)
            if cur is not val and not is_disable_wrapper(cur, val):
                out.append((owner, key, label, val))
        for owner_id, keys in self._class_keys.items():
            owner = self._bindings[(owner_id, next(iter(keys)))][0]
            for key in set(vars(owner)) - keys:
                if isinstance(vars(owner)[key], _CODE_TYPES):
                    out.append((owner, key, f"{owner.__module__}.{owner.__qualname__}.{key}",
                                _NEW))
        return out

    def quick_changes(self) -> list[str]:
        now = _quick()
        got = self._got.changes() if self._got is not None else []
        return [f"{k} changed from {self._quick.get(k)!r} to {v!r}"
                for k, v in now.items() if v is not None and self._quick.get(k) != v] + got

    def changes(self) -> list[str]:
        out = self.quick_changes()
        for _, _, label, val in self._binding_changes()[:5]:
            out.append(f"{label} was {'added' if val is _NEW else 'rebound'}")
        if _dispatch_digest() != self._digest:
            out.append("a kernel registered in torch's dispatcher for an aten op was replaced "
                       "(torch.library / Library.impl on an existing operator)")
        return out

    def restore(self) -> list[str]:
        """Pops modes pushed since the snapshot and puts the global hook registries back.
        Returns what could not be put back (empty when all was): such a worker must not be
        reused."""
        # a rewritten relocation slot is not put back: what else the native code that wrote
        # it changed is unknown
        failed: list[str] = self._got.changes() if self._got is not None else []
        try:
            while _len_function_stack() > len(self._quick["torch function modes"]):
                _pop_function_stack()
            while _len_dispatch_stack() > len(self._quick["torch dispatch modes"]):
                _pop_dispatch_stack()
        except Exception as e:  # noqa: BLE001 - reported: the worker is replaced
            failed.append(f"torch mode stacks: {type(e).__name__}: {e}")
        for name, d in self._hook_dicts.items():
            if vars(_module_mod).get(name) is not d:
                setattr(_module_mod, name, d)
            want = self._hooks.get(name, {})
            if d != want:
                d.clear()
                d.update(want)
        for owner, key, _, val in self._binding_changes():
            try:
                if val is _NEW:
                    delattr(owner, key)
                else:
                    setattr(owner, key, val)
            except Exception as e:  # noqa: BLE001 - reported: the worker is replaced
                failed.append(f"binding {getattr(owner, '__name__', owner)!s}.{key}: "
                              f"{type(e).__name__}: {e}")
        return failed
