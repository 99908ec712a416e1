"""process_state: changes to torch's process state that no watched function reveals."""

import torch

from kernelsmith_worker.opclass import OpCounter
from kernelsmith_worker.process_state import ProcessState


class _Mode(torch.overrides.TorchFunctionMode):
    __module__ = "kernelsmith_worker.fake"  # claiming the evaluator's module changes nothing

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_a_mode_left_on_the_stack_is_seen_and_popped():
    state = ProcessState.capture()
    _Mode().__enter__()
    assert any("torch function modes" in c for c in state.quick_changes())
    state.restore()
    assert state.quick_changes() == []


def test_the_evaluators_own_mode_is_allowed():
    state = ProcessState.capture()
    with OpCounter(None):
        assert state.quick_changes() == []


def test_rebinding_and_shadowing_in_torch_are_seen_and_undone():
    import torch.nn.modules.linear as linear

    state = ProcessState.capture()
    original = linear.F
    linear.F = object()
    torch.nn.Linear.__call__ = lambda self, *a: None
    changes = state.changes()
    assert any("linear.F was rebound" in c for c in changes)
    assert any("Linear.__call__ was added" in c for c in changes)
    state.restore()
    assert linear.F is original and "__call__" not in vars(torch.nn.Linear)
    assert state.changes() == []


def test_a_hook_registry_replaced_by_a_lying_dict_is_seen():
    import torch.nn.modules.module as module

    class Lying(dict):
        def __len__(self):
            return 0

    state = ProcessState.capture()
    original = module._global_forward_pre_hooks
    module._global_forward_pre_hooks = Lying({1: lambda m, i: None})
    try:
        assert any("_global_forward_pre_hooks" in c for c in state.quick_changes())
    finally:
        state.restore()
    assert module._global_forward_pre_hooks is original
