"""Native threads (started from C, invisible to Python's thread lists) are seen through
/proc/self/task."""
import threading

import pytest
import torch

from kernelsmith_worker import cpu_ext
from kernelsmith_worker.findings import Hacked
from kernelsmith_worker.integrity import IntegrityGuard, thread_idents
from kernelsmith_worker.os_threads import ThreadWatch, os_threads, outlived
from kernelsmith_worker.runner import CandidateChecks

_SOURCE = r"""
#include <pthread.h>
#include <unistd.h>
#include <atomic>
static std::atomic<int> stop{0};
static void* Loop(void*) { while (!stop.load()) usleep(1000); return nullptr; }
static pthread_t thread;
extern "C" int ks_test_start() {
  stop = 0;
  return pthread_create(&thread, nullptr, Loop, nullptr);
}
extern "C" int ks_test_stop() { stop = 1; return pthread_join(thread, nullptr); }
"""


@pytest.fixture(scope="module")
def native_lib():
    import ctypes

    path, _ = cpu_ext.build("ks_test_native_thread", _SOURCE, openmp=False)
    return ctypes.CDLL(str(path))


def test_a_native_thread_is_seen_and_python_threads_are_left_to_their_own_check(native_lib):
    watch = ThreadWatch()
    assert watch.new() == []
    ev = threading.Event()
    t = threading.Thread(target=ev.wait)
    t.start()
    try:
        assert watch.new() == []  # a Python thread: background_thread's check
        assert native_lib.ks_test_start() == 0
        try:
            found = watch.new()
            assert len(found) == 1 and "tid" in found[0]
            tid = int(found[0].split("tid ")[1].rstrip(")"))
            assert tid in os_threads()
        finally:
            native_lib.ks_test_stop()
        assert watch.new() == []  # ended: nothing left behind
    finally:
        ev.set()
        t.join()


def test_an_allowed_pool_that_outlives_its_request_retires_the_worker(native_lib, capsys):
    watch = ThreadWatch(allowed=1)
    assert not outlived(watch) and not outlived(None)
    assert native_lib.ks_test_start() == 0
    try:
        assert watch.new() == []  # within the budget while the request runs
        assert len(watch.left()) == 1
        assert outlived(watch)  # but not past its end
        assert "the worker is replaced" in capsys.readouterr().err
    finally:
        native_lib.ks_test_stop()
    assert not outlived(watch)


def test_allow_current_accepts_the_evaluators_own_threads(native_lib):
    watch = ThreadWatch()
    assert native_lib.ks_test_start() == 0
    try:
        watch.allow_current()
        assert watch.new() == []
    finally:
        native_lib.ks_test_stop()


def test_candidate_checks_reject_a_native_thread_left_running(native_lib):
    checks = CandidateChecks(IntegrityGuard(), thread_idents(), torch.device("cpu"),
                             ThreadWatch())
    checks("before")
    assert native_lib.ks_test_start() == 0
    try:
        with pytest.raises(Hacked) as e:
            checks("after ModelNew.forward")
        assert [f["kind"] for f in e.value.findings] == ["native_thread"]
    finally:
        native_lib.ks_test_stop()
    checks("after it ended")


def test_reading_the_threads_is_not_the_candidates_file_traffic():
    from kernelsmith_worker.event_watch import EventWatch

    with EventWatch() as watch:
        os_threads()
        ThreadWatch().new()
    assert "file_io" not in watch.seen


def test_the_evaluators_threads_are_not_taken_for_tampering(native_lib):
    from kernelsmith_worker.os_threads import evaluator_threads

    guard = IntegrityGuard()
    watch = ThreadWatch()
    with evaluator_threads():
        assert native_lib.ks_test_start() == 0
    try:
        assert watch.new() == []
        assert guard.changes(True) == []
    finally:
        native_lib.ks_test_stop()


def test_an_unreaped_child_process_is_in_the_cpu_account():
    """A process cloned beside the caller is no thread of the worker; left unreaped (a
    zombie) its CPU is not in RUSAGE_CHILDREN either, yet the sample it ran in counts it."""
    import os
    import time

    from kernelsmith_worker.cpu_account import CpuAccount
    from kernelsmith_worker.os_threads import children_cpu_ns

    acct = CpuAccount(frozenset())
    acct.start()
    pid = os.fork()
    if pid == 0:
        end = time.perf_counter() + 0.1
        while time.perf_counter() < end:
            pass
        os._exit(0)
    try:
        time.sleep(0.3)  # the child is a zombie now
        acct.stop("cand")
        assert children_cpu_ns() >= 50_000_000
        assert acct.ended_ns["cand"] >= 50_000_000
    finally:
        os.waitpid(pid, 0)
    assert children_cpu_ns() == 0  # reaped: its time is RUSAGE_CHILDREN's now
