"""The integrity guard sees replaced functions and changed settings, and restores them."""

from __future__ import annotations

import time

import torch

from kernelsmith_worker.integrity import IntegrityGuard, new_threads, thread_idents


def test_guard_detects_and_restores(worker_ctx):
    guard = IntegrityGuard()
    assert guard.changes() == []
    watched = guard.watched()
    assert "time.perf_counter" in watched and "torch.cuda.Event.elapsed_time" in watched
    assert any(w.startswith("kernelsmith_worker.correctness.") for w in watched)
    original_timer, original_eq = time.perf_counter, torch.Tensor.__eq__
    threads = torch.get_num_threads()
    try:
        time.perf_counter = lambda: 0.0
        torch.Tensor.__eq__ = lambda self, other: True
        torch.set_num_threads(threads + 1)
        changes = guard.changes()
        assert "time.perf_counter was replaced" in changes
        assert "torch.Tensor.__eq__ was replaced" in changes
        assert any(c.startswith("torch.get_num_threads() changed") for c in changes)
    finally:
        assert guard.restore() == []  # everything put back
    assert time.perf_counter is original_timer
    assert torch.Tensor.__eq__ is original_eq
    assert torch.get_num_threads() == threads
    assert guard.changes() == []


def test_what_cannot_be_restored_is_reported(worker_ctx):
    guard = IntegrityGuard()
    name = "torch.get_num_threads()"
    get, _ = guard._settings[name]

    def refuse(n):
        raise RuntimeError("cannot set")
    guard._settings[name] = (get, refuse)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(threads + 1)
        failed = guard.restore()
        assert len(failed) == 1 and failed[0].startswith(name) and "cannot set" in failed[0]
    finally:
        torch.set_num_threads(threads)


def test_code_object_swap_is_seen(worker_ctx):
    from kernelsmith_worker import correctness

    guard = IntegrityGuard()
    fn = correctness.bitwise_equal
    code = fn.__code__
    try:
        fn.__code__ = (lambda a, b: True).__code__
        label = "kernelsmith_worker.correctness.bitwise_equal.__code__ was replaced"
        assert label in guard.changes()
    finally:
        guard.restore()
    assert fn.__code__ is code


def test_new_threads():
    import threading

    base = thread_idents()
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="probe", daemon=True)
    t.start()
    try:
        assert new_threads(base) == ["probe"]
    finally:
        stop.set()
        t.join()
    assert new_threads(base) == []


def test_backend_flags_it_does_not_name_are_watched(worker_ctx):
    # a setting the candidate changes at import to slow the reference (cuDNN's benchmark
    # limit, the preferred linear algebra library) is seen and put back
    guard = IntegrityGuard()
    cudnn = torch.backends.cudnn
    limit = cudnn.benchmark_limit
    linalg = torch.backends.cuda.preferred_linalg_library()
    try:
        cudnn.benchmark_limit = limit + 7
        torch.backends.cuda.preferred_linalg_library("magma")
        changes = guard.changes()
        assert any(c.startswith("torch.backends.cudnn.benchmark_limit") for c in changes)
        assert any(c.startswith("torch.backends.cuda.preferred_linalg_library()") for c in changes)
    finally:
        assert guard.restore() == []
    assert cudnn.benchmark_limit == limit
    assert torch.backends.cuda.preferred_linalg_library() == linalg
