"""torch's switches of what the audit observes (observer_switches.py), seen by identity in
the audit's host-call watch, and ops issued inside a launch counted unless Triton issued them
(opclass.OpCounter)."""
from __future__ import annotations

import os
import threading

import torch

from kernelsmith_worker import observer_switches
from kernelsmith_worker.event_watch import EventWatch
from kernelsmith_worker.launches import LaunchRecorder
from kernelsmith_worker.opclass import OpCounter

_TRITON_FILE = os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "triton",
                            "runtime", "ks_test_interpreter.py")


def _introspection(fn) -> list[str]:
    rec = LaunchRecorder()
    with EventWatch(rec, host_calls=True) as w:
        fn(rec)
    return w.seen.get("introspection", [])


def test_switches_are_seen_by_identity_whatever_name_reached_them():
    assert observer_switches.collect() > 20
    alias = getattr(torch._C._autograd, "_enable_" + "record_function")
    seen = _introspection(lambda rec: alias(True))
    assert any("_enable_record_function" in s for s in seen)
    with_depth = _introspection(lambda rec: (rec.launch("k").__enter__(),
                                             torch._C._get_dispatch_stack_at))
    assert with_depth == []  # reading the attribute is no call
    inside = _introspection(lambda rec: [rec.launch("k").__enter__(),
                                         torch._C._len_torch_dispatch_stack()])
    assert any("_len_torch_dispatch_stack" in s for s in inside)  # inside a launch too


def test_torch_s_public_wrappers_are_seen_when_candidate_code_calls_them():
    def capturing(rec):  # on a machine without a GPU the call itself raises
        try:
            torch.cuda.is_current_stream_capturing()
        except Exception:  # noqa: BLE001
            pass
    assert any("is_current_stream_capturing" in s for s in _introspection(capturing))
    from torch.utils._python_dispatch import _get_current_dispatch_mode
    assert any("_get_current_dispatch_mode" in s
               for s in _introspection(lambda rec: _get_current_dispatch_mode()))


def test_a_switch_called_in_a_thread_started_meanwhile_is_seen():
    def body(rec):
        t = threading.Thread(target=lambda: torch._C._autograd._enable_record_function(True))
        t.start()
        t.join()
    assert any("_enable_record_function" in s for s in _introspection(body))


def test_torch_and_an_honest_forward_call_none_of_them():
    def body(rec):
        x = torch.ones(8, 8)
        torch.softmax(x, 1)
        with torch.no_grad():
            torch.nn.functional.layer_norm(x, (8,))
        with rec.launch("kernel"):
            x.sum()
    assert _introspection(body) == []


def test_ops_inside_a_launch_count_unless_triton_issued_them():
    rec = LaunchRecorder()
    x = torch.ones(4, 4)
    scope = {"x": x}
    as_triton = compile("x.clone()", _TRITON_FILE, "exec")
    with OpCounter(rec) as counter, rec.launch("kernel"):
        exec(as_triton, scope)  # Triton's interpreter copying a storage
        torch.softmax(x, 1)  # candidate code inside the launch (a grid callable, a hook)
    assert "aten._softmax" in counter.counts
    assert "aten.clone" not in counter.counts



class _Source:
    def pristine(self, trial):
        from kernelsmith_worker.inputs import TrialData
        return TrialData([torch.full((4, 4), float(trial))])

    def reference(self, trial):
        return torch.full((4, 4), float(trial)) * 2


def test_a_switch_in_the_audits_unwatched_looking_call_is_seen():
    # the profiler's call is watched as well as the dispatch mode's: a candidate that counts
    # its calls and switches RecordFunction off only in the profiler's is seen there
    from kernelsmith_worker.audit import AuditInputs, run_audit
    from kernelsmith_worker.correctness import TOLERANCES

    def run_candidate(args, mode=None):
        if mode is None:  # what a call counter would tell apart: not the dispatch mode's call
            torch._C._autograd._enable_record_function(True)
        return args[0] * 2

    rec = LaunchRecorder()
    with rec.launch("kernel"):
        pass
    a = AuditInputs(backend="triton", dev=torch.device("cpu"), recorder=rec,
                    run_candidate=run_candidate, kernel_names=lambda: {"kernel"},
                    source=_Source(), tolerance=TOLERANCES["default"], correct=False,
                    constant_trials=None, interpret=True)
    _, found = run_audit(a)
    assert any(f["kind"] == "evaluator_introspection" and "_enable_record_function" in f["detail"]
               for f in found), found


def test_a_switch_reached_from_c_code_runs_the_workers_stand_in_and_is_seen():
    # functools.partial and map call a C function from C: no profile event; the stand-in
    # install() put in its place is Python, so its frame is seen whatever the route
    import functools

    observer_switches.collect()
    observer_switches.install()
    off = functools.partial(torch._C._autograd._enable_record_function, True)
    assert any("_enable_record_function" in s for s in _introspection(lambda rec: off()))
    assert any("_len_torch_dispatch_stack" in s for s in _introspection(
        lambda rec: list(map(lambda f: f(), [torch._C._len_torch_dispatch_stack]))))
    from torch.utils import _python_dispatch  # torch's own module, bound by name at import
    assert _python_dispatch._get_dispatch_stack_at is torch._C._get_dispatch_stack_at
    assert torch._C._len_torch_dispatch_stack() == 0  # torch works through the stand-ins


def test_the_originals_are_called_only_from_a_stand_in():
    import pytest

    keeper = observer_switches._KEEPER
    with pytest.raises(PermissionError):
        ok, value = keeper.send(("call", "torch._C._autograd._enable_record_function",
                                 (False,), {}))
        if not ok:
            raise value


def test_code_compiled_from_a_string_is_the_candidates():
    # "<string>" is no installed file: a switch called there is seen, and an op it issues
    # inside a launch (a grid callable made with exec) is counted
    run = compile("torch._C._autograd._enable_record_function(True)", "<string>", "exec")
    assert any("_enable_record_function" in s
               for s in _introspection(lambda rec: exec(run, {"torch": torch})))
    rec = LaunchRecorder()
    grid = compile("x.sum()", "<string>", "exec")
    with OpCounter(rec) as counter, rec.launch("kernel"):
        exec(grid, {"x": torch.ones(4)})
    assert "aten.sum" in counter.counts


def test_a_switch_torch_calls_back_for_the_candidate_is_the_candidates():
    # torch's tree_map calls the function it is handed from torch's own file: the caller
    # does not name the switch, so the candidate chose it
    from torch.utils._pytree import tree_map

    observer_switches.collect()
    observer_switches.install()
    seen = _introspection(lambda rec: tree_map(torch._C._autograd._enable_record_function,
                                               True))
    assert any("_enable_record_function" in s for s in seen)


def test_candidate_code_running_with_the_python_dispatch_key_excluded_is_seen():
    # a guard class is a type: making one raises no profile event, but the key it excludes
    # is read at the candidate's next call into torch
    observer_switches.collect()
    observer_switches.install()

    def body(rec):
        guard = getattr(torch._C, "_Disable" + "TorchDispatch")
        with guard():
            torch.softmax(torch.ones(4), 0)
    assert any("Python dispatch key" in s for s in _introspection(body))
    assert _introspection(lambda rec: torch.softmax(torch.ones(4), 0)) == []


def test_a_boxed_redispatch_below_the_python_key_is_seen():
    # no switch at all: the op enters the dispatcher below the key the dispatch mode sits on
    observer_switches.collect()
    observer_switches.install()
    op, x = torch.ops.aten.sum.dim_IntList, torch.ones(2, 3)
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
    for route in (lambda rec: op.redispatch(keys, x, [1]),
                  lambda rec: op._handle.redispatch_boxed(keys, x, [1])):
        assert any("redispatch" in s for s in _introspection(route))
    assert op.redispatch(keys, x, [1]).tolist() == [3.0, 3.0]  # torch still works
