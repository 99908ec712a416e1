"""Process state that changes what torch computes, outside any function the integrity guard
watches by identity: mode stacks, dispatch-key TLS, global nn.Module hooks and the kernels
registered in the dispatcher for aten ops.

A candidate that enters a TorchFunctionMode at import (and never leaves it) makes later
comparisons lie; one that re-registers `aten::mm` for CUDA or installs a global forward hook
slows the reference down or fakes its results, in this request and in every later request
the same worker serves. None of that replaces a Python function, so the state itself is
compared with a snapshot taken before any candidate code ran.

`ProcessState.capture()` takes the snapshot. `quick_changes()` (every few microseconds: run
after each candidate call) compares the stacks, TLS and hooks; `changes()` adds the dispatch
table digest (about 0.1 s: run after import and at the end of each stage). `restore()` undoes
what can be undone (pops modes, clears hooks); a worker with such a change is replaced
anyway, since a dispatcher registration cannot be taken back reliably.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch
import torch.nn.modules.module as _module_mod

# Dispatch keys whose kernels run real computations on the devices we time. Meta, Fake,
# functionalization and tracing keys are left out: lazily imported parts of torch register
# there without changing any computation.
_KEYS = ("CPU", "CUDA", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
         "CompositeExplicitAutogradNonFunctional", "Autograd", "AutogradCPU", "AutogradCUDA",
         "AutogradOther", "AutocastCUDA", "AutocastCPU", "BackendSelect", "ADInplaceOrView",
         "Python", "PythonTLSSnapshot", "PreDispatch", "PythonDispatcher")

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
_grad_enabled = torch.is_grad_enabled


def _global_hook_dicts() -> dict[str, Any]:
    """torch.nn.modules.module's `_global_*` hook registries (dicts), by name."""
    return {name: val for name, val in vars(_module_mod).items()
            if name.startswith("_global_") and isinstance(val, dict)}


def _dispatch_digest() -> str:
    """sha256 over the kernels registered for every aten/prims op at the computing keys."""
    h = hashlib.sha256()
    for name in sorted(n for n in _all_op_names() if n.startswith(("aten::", "prims::"))):
        try:
            table = _dump_table(name)
        except Exception:  # noqa: BLE001 - an op without a table
            continue
        h.update(name.encode())
        for line in table.splitlines():
            key = line.split(":", 1)[0]
            if key in _KEYS:
                h.update(line.encode())
    return h.hexdigest()


def _mode_names(depth: int, at: Any) -> list[str]:
    """Classes of the modes on a stack, the evaluator's own (its OpCounter, say) left out."""
    out = []
    for i in range(depth):
        try:
            kind = type(at(i))
        except Exception:  # noqa: BLE001 - an infra mode slot
            continue
        if not kind.__module__.startswith("kernelsmith_worker"):
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
        **{f"torch.nn.modules.module.{name} entries": len(d)
           for name, d in _global_hook_dicts().items()},
    }


class ProcessState:
    """Snapshot of the state above; compare with `changes()`."""

    def __init__(self, quick: dict[str, Any], digest: str) -> None:
        self._quick = quick
        self._digest = digest
        self._hooks = {name: dict(d) for name, d in _global_hook_dicts().items()}

    @classmethod
    def capture(cls) -> ProcessState:
        return cls(_quick(), _dispatch_digest())

    def quick_changes(self) -> list[str]:
        now = _quick()
        return [f"{k} changed from {self._quick.get(k)!r} to {v!r}"
                for k, v in now.items() if v is not None and self._quick.get(k) != v]

    def changes(self) -> list[str]:
        out = self.quick_changes()
        if _dispatch_digest() != self._digest:
            out.append("a kernel registered in torch's dispatcher for an aten op was replaced "
                       "(torch.library / Library.impl on an existing operator)")
        return out

    def restore(self) -> None:
        """Pops modes pushed since the snapshot and puts the global hook registries back."""
        try:
            while _len_function_stack() > len(self._quick["torch function modes"]):
                _pop_function_stack()
            while _len_dispatch_stack() > len(self._quick["torch dispatch modes"]):
                _pop_dispatch_stack()
        except Exception:  # noqa: BLE001 - best effort; the worker is replaced anyway
            pass
        for name, d in _global_hook_dicts().items():
            want = self._hooks.get(name, {})
            if d != want:
                d.clear()
                d.update(want)
