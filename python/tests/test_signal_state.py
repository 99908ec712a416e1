"""Signal handlers and timers: a candidate's are seen at the next check and put back."""

from __future__ import annotations

import ctypes
import signal

import pytest
import torch

from conftest import CASES, kinds, run_eval
from kernelsmith_worker.event_watch import EventWatch
from kernelsmith_worker.findings import Hacked
from kernelsmith_worker.integrity import IntegrityGuard, thread_idents
from kernelsmith_worker.runner import CandidateChecks
from kernelsmith_worker import library_code, library_reach
from kernelsmith_worker.signal_state import SignalState


def test_unchanged_state_has_no_changes():
    assert SignalState().changes() == []


def test_python_handler_and_interval_timer_are_seen_and_put_back():
    state = SignalState()
    before = signal.getsignal(signal.SIGUSR1)
    signal.signal(signal.SIGUSR1, lambda *_: None)
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    found = state.changes()
    assert any("SIGUSR1" in c and "Python handler" in c for c in found)
    assert any("ITIMER_REAL" in c for c in found)
    assert signal.getsignal(signal.SIGUSR1) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert state.changes() == []


def test_native_handler_through_ctypes_is_seen_by_the_event_watch():
    library_code.clear()
    with EventWatch(kinds=frozenset({"introspection"})) as w:
        libc = ctypes.CDLL(None)
        try:
            libc.sigaction  # looked up from this (non-library) file
        except library_reach.LookupRefused:
            pass  # where a worker context installed library_reach's hook before this test
    # whichever audit hook came first: the event watch's note, or library_reach's refusal
    assert any("sigaction" in s for s in w.seen.get("introspection", [])) or any(
        "sigaction" in r for r in library_code.refusals())
    library_code.clear()


def test_armed_timer_is_disarmed_before_the_handler_goes_back():
    state = SignalState()
    signal.signal(signal.SIGALRM, lambda *_: None)
    signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
    found = state.changes()  # the default action would kill this process on a late alarm
    assert len(found) == 2
    signal.setitimer(signal.ITIMER_REAL, 0)


def test_candidate_checks_reject_a_handler():
    checks = CandidateChecks(IntegrityGuard(), thread_idents(), torch.device("cpu"),
                             signals=SignalState())
    checks("before")
    signal.signal(signal.SIGUSR1, lambda *_: None)
    with pytest.raises(Hacked) as e:
        checks("after importing the candidate")
    assert [f["kind"] for f in e.value.findings] == ["signal_handler"]
    checks("after it was put back")


def test_handler_installed_at_import_is_a_reject(worker_ctx):
    result, poisoned, _ = run_eval(worker_ctx, CASES / "cpu_signal_handler.py")
    assert result["status"] == "hacked"
    assert "signal_handler" in kinds(result, "reject")
    assert poisoned
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_frames_read_anywhere_in_the_evaluation_are_a_reject(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_frames_exec.py")
    assert result["status"] == "hacked"
    assert "evaluator_introspection" in kinds(result, "reject")
    found = " ".join(f["detail"] for f in result["findings"])
    assert "compile()" in found
    assert "PyEval_GetFrame" in found


def test_honest_candidate_stays_clean(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py")
    assert result["status"] == "ok", result["message"]


def test_posix_timer_created_by_native_code_is_seen_and_deleted():
    from kernelsmith_worker.signal_state import posix_timers
    state = SignalState()
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    # looked up without the ctypes audit event: library_reach refuses timer_create to code
    # that is not installed (this test, as far as it can tell) once a worker context exists
    timer_create = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                    ctypes.c_void_p)(library_reach.lookup(rt._handle,
                                                                          "timer_create"))
    event = (ctypes.c_int * 16)()  # struct sigevent: value, signo, notify (SIGEV_SIGNAL = 0)
    event[2] = signal.SIGRTMIN + 5
    timer = ctypes.c_void_p()
    assert timer_create(1, ctypes.byref(event), ctypes.byref(timer)) == 0  # not armed
    assert len(posix_timers()) == 1 + len(state._posix)
    found = state.changes()
    assert len(found) == 1 and "POSIX timer" in found[0]
    assert set(posix_timers()) == state._posix  # deleted
    assert state.changes() == []
