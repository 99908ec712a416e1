"""The cpu backend's thread rules: the evaluator's threads' scheduling state (thread_state),
new native threads beyond the budget (os_threads.ThreadWatch), and the CPU time of each
timed side (cpu_account), with small C++ thread payloads."""
import ctypes
import os
import threading
import time

import pytest
import torch

from kernelsmith_worker import cpu_ext
from kernelsmith_worker import cpu_account
from kernelsmith_worker.cpu_account import (BEYOND_MAX, BUDGET_MARGIN, CONFIRM_BAND,
                                            DEMAND_MARGIN, FOREIGN_MAX, CpuAccount, calibrate,
                                            thread_cpu_ns)
from kernelsmith_worker.findings import Hacked
from kernelsmith_worker.integrity import IntegrityGuard, thread_idents
from kernelsmith_worker.os_threads import ThreadWatch
from kernelsmith_worker.runner import CandidateChecks
from kernelsmith_worker.thread_state import ThreadState

_SOURCE = r"""
#include <pthread.h>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>
static volatile uint64_t sink;
// Fixed work (not fixed time): its CPU time does not depend on how loaded the machine is.
extern "C" void ks_work(int64_t n) {
  uint64_t x = 1;
  for (int64_t i = 0; i < n; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  sink = x;
}
// `threads` threads that block (wait == 0) or do ks_work(n) (wait == 1) until ks_stop().
static std::atomic<int> stop{0};
static std::mutex mu;
static std::condition_variable cv;
static std::vector<pthread_t> pool;
static int64_t g_n = 0;
static int g_mode = 0;
static void* Loop(void*) {
  if (g_mode == 1) { ks_work(g_n); return nullptr; }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [] { return stop.load() != 0; });
  return nullptr;
}
extern "C" int ks_start(int threads, int mode, int64_t n) {
  stop = 0; g_mode = mode; g_n = n;
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    if (pthread_create(&t, nullptr, Loop, nullptr) != 0) return -1;
    pool.push_back(t);
  }
  return 0;
}
extern "C" void ks_stop() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = 1;
  }
  cv.notify_all();
  for (auto t : pool) pthread_join(t, nullptr);
  pool.clear();
}
"""
_WORK = 20_000_000  # some tens of ms of one CPU


@pytest.fixture(scope="module")
def lib():
    path, _ = cpu_ext.build("ks_test_cpu_threads", _SOURCE, openmp=False)
    so = ctypes.CDLL(str(path))
    so.ks_work.argtypes = [ctypes.c_int64]
    so.ks_start.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64]
    return so


def _checks(state: ThreadState, watch: ThreadWatch | None = None) -> CandidateChecks:
    return CandidateChecks(IntegrityGuard(), thread_idents(), torch.device("cpu"),
                           watch or ThreadWatch(), None, None, state)


# --- thread state ---------------------------------------------------------------------------

@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin to one")
def test_a_pinned_main_thread_is_rejected_and_put_back():
    me = threading.get_native_id()
    before = os.sched_getaffinity(me)
    state = ThreadState.capture()
    checks = _checks(state)
    checks("before")  # unchanged: nothing
    os.sched_setaffinity(0, {min(before)})
    try:
        with pytest.raises(Hacked) as e:
            checks("after ModelNew.forward")
        f = e.value.findings[0]
        assert f["kind"] == "thread_state_changed" and f["severity"] == "reject"
        assert f"tid {me}" in f["detail"] and "CPU affinity" in f["detail"]
        assert os.sched_getaffinity(me) == before  # restored
        assert state.changes() == []
    finally:
        os.sched_setaffinity(0, before)


def test_policy_and_nice_of_another_evaluator_thread_are_compared():
    """A thread of its own, so this process's main thread keeps its policy and nice
    (leaving SCHED_IDLE or lowering nice again may need privileges)."""
    ready, go, done, end = (threading.Event() for _ in range(4))
    tid = []

    def body():
        tid.append(threading.get_native_id())
        ready.set()
        go.wait()
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        os.setpriority(os.PRIO_PROCESS, 0, 19)
        done.set()
        end.wait()

    t = threading.Thread(target=body)
    t.start()
    ready.wait()
    state = ThreadState.capture()
    assert tid[0] in state.tids()
    go.set()
    done.wait()
    changed = state.changes()
    assert len(changed) == 1 and f"tid {tid[0]}" in changed[0]
    assert "SCHED_OTHER -> SCHED_IDLE" in changed[0] and "-> 19" in changed[0]
    state.restore()  # best effort: what the kernel refuses is reported, not raised
    end.set()
    t.join()
    assert state.changes() == []  # an ended thread is no change


def test_only_the_current_thread_when_asked():
    assert ThreadState.capture(only_current=True).tids() == {threading.get_native_id()}


# --- native threads beyond the budget ---------------------------------------------------------

def test_native_threads_up_to_the_budget_may_wait_between_calls(lib):
    watch = ThreadWatch(allowed=1)
    assert lib.ks_start(1, 0, 0) == 0
    try:
        assert watch.new() == []  # one pool worker: within a budget of one
    finally:
        lib.ks_stop()
    assert lib.ks_start(2, 0, 0) == 0
    try:
        found = watch.new()
        assert len(found) == 2
        with pytest.raises(Hacked) as e:
            _checks(ThreadState.capture(), watch)("after ModelNew.forward")
        assert e.value.findings[0]["kind"] == "native_thread"
    finally:
        lib.ks_stop()


# --- CPU time per side ----------------------------------------------------------------------

def _one_thread_ns(lib) -> int:
    a = thread_cpu_ns(threading.get_native_id())
    lib.ks_work(_WORK)
    return thread_cpu_ns(threading.get_native_id()) - a


def test_threads_working_through_a_candidate_sample_are_counted(lib):
    one = _one_thread_ns(lib)
    acct = CpuAccount()
    acct.start()
    lib.ks_work(_WORK)  # honest: the timing thread computes
    acct.stop("cand")
    assert acct.foreign_ns["cand"] < 0.2 * one
    assert lib.ks_start(2, 1, 4 * _WORK) == 0  # threads of its own, still working at the end
    try:
        acct.start()
        lib.ks_work(_WORK)
        acct.stop("cand")
    finally:
        lib.ks_stop()
    assert acct.foreign_ns["cand"] > 0.7 * one
    assert abs(acct.ended_ns["cand"]) < 0.1 * one  # nothing ended inside those samples


def test_threads_started_and_joined_inside_one_sample_are_counted(lib):
    one = _one_thread_ns(lib)
    acct = CpuAccount()
    for _ in range(20):  # honest samples: nothing ends inside them
        acct.start()
        lib.ks_work(_WORK // 20)
        acct.stop("cand")
    assert abs(acct.ended_ns["cand"]) < 0.05 * one
    acct.start()
    assert lib.ks_start(2, 1, _WORK) == 0  # two threads of its own, joined before the end
    lib.ks_stop()
    acct.stop("cand")
    assert acct.foreign_ns["cand"] < 0.1 * one  # not alive at either end
    assert 1.6 * one < acct.ended_ns["cand"] < 2.6 * one
    assert acct.per_wall("cand") > (acct.own_ns["cand"] + 1.5 * one) / acct.wall_ns["cand"]


def test_child_processes_reaped_inside_a_sample_are_counted():
    import subprocess
    import sys
    acct = CpuAccount()
    acct.start()
    subprocess.run([sys.executable, "-c", "sum(range(5_000_000))"], check=True)  # reaped
    acct.stop("cand")
    assert acct.ended_ns["cand"] > 50_000_000  # its CPU (~0.1 s and more), not the wait's


def test_a_thread_alive_before_a_sample_counts_only_its_time_inside(lib):
    one = _one_thread_ns(lib)
    before = set(CpuAccount.snapshot()[0])
    assert lib.ks_start(1, 1, 2 * _WORK) == 0  # works before the sample and into it
    try:
        for _ in range(2000):  # until it has done more than half its work
            clocks = CpuAccount.snapshot()[0]
            if sum(ns for tid, ns in clocks.items() if tid not in before) > one:
                break
            time.sleep(0.001)
        acct = CpuAccount()
        acct.start()
    finally:
        lib.ks_stop()  # joined inside the sample
    acct.stop("cand")
    # its whole life would read near 2x one; only the part inside the sample counts
    assert acct.ended_ns["cand"] < 1.2 * one


def test_a_spinning_thread_is_counted_while_the_reference_is_timed(lib):
    one = _one_thread_ns(lib)
    acct = CpuAccount()  # the evaluator's threads: those alive now
    assert lib.ks_start(1, 1, 4 * _WORK) == 0  # a candidate thread that works on its own
    try:
        acct.start()
        lib.ks_work(_WORK)  # the reference
        acct.stop("ref")
    finally:
        lib.ks_stop()
    assert acct.foreign_ns["ref"] > 0.7 * one
    assert acct.own_ns["ref"] > 0.7 * one
    quiet = CpuAccount()
    assert lib.ks_start(2, 0, 0) == 0  # a pool that blocks between calls
    try:
        quiet.start()
        lib.ks_work(_WORK)
        quiet.stop("ref")
    finally:
        lib.ks_stop()
    assert quiet.foreign_ns["ref"] < 0.1 * one


def _account(wall_s: float, own_s: float, foreign_s: float, side: str,
             ref_own_s: float | None = None, demand_s: float | None = None) -> CpuAccount:
    """Figures set by hand; without demand_s, as where the kernel keeps no schedstat."""
    acct = CpuAccount(frozenset())
    acct._waits_read = demand_s is not None
    acct.demand_ns[side] = int((demand_s or 0.0) * 1e9)
    acct.wall_ns[side] = int(wall_s * 1e9)
    acct.own_ns[side] = int(own_s * 1e9)
    acct.foreign_ns[side] = int(foreign_s * 1e9)
    if ref_own_s is not None:  # what the timing thread got while the reference was timed
        acct.wall_ns["ref"], acct.own_ns["ref"] = int(1e9), int(ref_own_s * 1e9)
    return acct


def test_findings_read_the_figures_against_the_budget():
    assert _account(1.0, 1.0, 0.02, "cand").findings(1) == []  # honest: ~1.0
    over = _account(1.0, 0.1, 1.0 + BUDGET_MARGIN, "cand").findings(1)
    assert [f["kind"] for f in over] == ["cpu_threads_over_budget"]
    assert _account(1.0, 0.2, 3.0, "cand").findings(4) == []  # a budget of four
    assert _account(0.001, 0.0, 1.0, "cand").findings(1) == []  # too little timed to say
    # a busy machine: one thread gets half a CPU; two threads at half a CPU each are two
    assert _account(1.0, 0.5, 0.02, "cand", ref_own_s=0.5).findings(1) == []
    busy = _account(1.0, 0.1, 0.9, "cand", ref_own_s=0.5)
    assert [f["kind"] for f in busy.findings(1)] == ["cpu_threads_over_budget"]
    assert busy.record(1)["cand_threads_used"] == pytest.approx(2.0)
    # so busy that the share is not read below MIN_AVAILABLE
    assert _account(1.0, 0.05, 0.05, "cand", ref_own_s=0.01).findings(1) == []
    ref = _account(1.0, 1.0, FOREIGN_MAX + 0.1, "ref")
    assert [f["kind"] for f in ref.findings(1)] == ["cpu_threads_while_reference"]
    assert ref.record(1)["foreign_cpu_per_wall"]["ref"] == pytest.approx(FOREIGN_MAX + 0.1)
    assert ref.record(1)["cpu_per_wall"]["cand"] is None


def test_demand_is_judged_where_schedstat_is_read():
    # one thread that computes, however busy the machine (CPU + run-queue wait = wall)
    assert _account(1.0, 0.4, 0.0, "cand", ref_own_s=0.4, demand_s=1.0).findings(1) == []
    # a helper that computes a third of the time beside the caller: 1.5 CPU per wall second
    # is within the average rule's margin, not within demand's
    slack = _account(1.0, 1.0, 0.5, "cand", ref_own_s=1.0, demand_s=1.5)
    assert [f["kind"] for f in slack.findings(1)] == ["cpu_threads_over_budget"]
    assert slack.record(1)["cand_threads_demanded"] == pytest.approx(1.5)
    assert _account(1.0, 1.0, 0.0, "cand", demand_s=1.0 + DEMAND_MARGIN - 0.01).findings(1) == []
    assert _account(1.0, 0.2, 2.0, "cand", demand_s=2.1).findings(2) == []
    # just over the budget: timed again before it is judged; far over it: judged at once
    assert not _account(1.0, 1.0, 0.0, "cand", demand_s=1.0 + DEMAND_MARGIN).near_budget(1)
    assert _account(1.0, 1.0, 0.0, "cand", demand_s=1.0 + DEMAND_MARGIN + 0.01).near_budget(1)
    assert not _account(1.0, 1.0, 0.0, "cand",
                        demand_s=1.0 + DEMAND_MARGIN + CONFIRM_BAND + 0.01).near_budget(1)


def test_two_threads_computing_at_once_read_as_two_whatever_the_load(lib):
    # the caller and a helper of its own both compute through the sample; the demand adds
    # their run-queue waits, so on a machine whose other cores are busy it still reads ~2
    acct = CpuAccount(evaluator=frozenset(CpuAccount.snapshot()[0]))
    assert lib.ks_start(1, 1, 8 * _WORK) == 0
    try:
        for _ in range(5):
            acct.start()
            lib.ks_work(_WORK // 4)
            acct.stop("cand")
    finally:
        lib.ks_stop()
    alone = CpuAccount(evaluator=frozenset(CpuAccount.snapshot()[0]))
    for _ in range(5):
        alone.start()
        lib.ks_work(_WORK // 4)
        alone.stop("cand")
    if not acct._waits_read:
        pytest.skip("this kernel keeps no schedstat")
    assert acct.threads_demanded() > 1.0 + DEMAND_MARGIN, acct.record(1)
    assert alone.threads_demanded() < 1.0 + DEMAND_MARGIN, alone.record(1)



def test_a_wait_booked_in_a_later_sample_counts_no_thread_past_the_window(monkeypatch):
    # schedstat books a run-queue wait when it ends: a pool thread preempted between samples
    # books that wait in the next sample it runs in. No thread is busy for longer than the
    # sample's reads, so a booked wait beyond that does not read as a second thread.
    release = threading.Event()
    helper = threading.Thread(target=release.wait)
    acct = CpuAccount(evaluator=frozenset(CpuAccount.snapshot()[0]))
    helper.start()
    booked = {"ns": 0}
    monkeypatch.setattr(CpuAccount, "_foreign_waits", lambda self, tids: {
        tid: booked["ns"] for tid in tids if tid != self._me and tid not in self._known})
    try:
        for _ in range(5):
            acct.start()
            booked["ns"] += int(50e6)  # 50 ms of wait booked inside a ~20 ms sample
            end = time.perf_counter() + 0.02
            while time.perf_counter() < end:
                pass
            acct.stop("cand")
    finally:
        release.set()
        helper.join()
    if not acct._waits_read:
        pytest.skip("this kernel keeps no schedstat")
    # the timing thread (~1.0) and the idle helper whose booked wait is capped (<= 1.0 more)
    demanded = acct.threads_demanded()
    assert 1.0 < demanded < 2.2, acct.record(1)


def _scripted(monkeypatch, helper_ns: int) -> CpuAccount:
    """An account of five 10 ms samples in which the timing thread (tid 1) computes
    throughout and a thread of the candidate (tid 2) computes helper_ns of each; the clocks
    are scripted, so the figures do not depend on this machine."""
    now = {"ns": 0}
    clocks = {1: 0, 2: 0}

    def perf_ns():
        return now["ns"]

    def snapshot():
        return dict(clocks), 0

    monkeypatch.setattr(cpu_account, "_perf_ns", perf_ns)
    monkeypatch.setattr(CpuAccount, "snapshot", staticmethod(snapshot))
    monkeypatch.setattr(cpu_account, "_sched_ns", lambda: (0, 0))
    monkeypatch.setattr(CpuAccount, "_foreign_waits", lambda self, tids: {})
    acct = CpuAccount(evaluator=frozenset())
    acct._me = 1
    for _ in range(5):
        acct.start()
        now["ns"] += 10_000_000
        clocks[1] += 10_000_000
        clocks[2] += helper_ns
        acct.stop("cand")
    return acct


def test_threads_computing_at_once_are_over_budget_however_small_the_share(monkeypatch):
    # a helper computing 15 % of the rows beside the caller: a demand of ~1.2, inside
    # DEMAND_MARGIN, but CPU beyond what one thread can use in the window
    helper = _scripted(monkeypatch, 1_500_000)
    assert helper.record(1)["cand_cpu_beyond_budget"] == pytest.approx(0.15)
    assert [f["kind"] for f in helper.findings(1)] == ["cpu_threads_over_budget"]
    assert "beyond what its thread budget" in helper.findings(1)[0]["detail"]
    assert helper.findings(2) == []  # a budget of two may run both
    assert _scripted(monkeypatch, 0).findings(1) == []


def test_threads_that_take_turns_use_nothing_beyond_the_budget(lib):
    # a caller that sleeps while a thread of the candidate computes (a pool whose caller
    # blocks), and a caller that computes alone: never beyond one thread in a window
    acct = CpuAccount(evaluator=frozenset(CpuAccount.snapshot()[0]))
    for _ in range(5):
        acct.start()
        assert lib.ks_start(1, 1, _WORK // 4) == 0
        lib.ks_stop()  # joins: the caller blocks while the helper computes
        lib.ks_work(_WORK // 8)
        acct.stop("cand")
    assert acct.beyond_per_wall("cand", 1) < BEYOND_MAX / 10, acct.record(1)
    assert acct.findings(1) == [] or acct.threads_demanded() > 1.0 + DEMAND_MARGIN


def _timed_reference(acc: CpuAccount, seconds: float) -> None:
    """Reference samples of a torch op that releases the interpreter's lock while it runs."""
    a = torch.rand(192, 192)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        acc.start()
        for _ in range(8):
            torch.mm(a, a)
        acc.stop("ref")


def test_a_thread_holding_the_interpreter_while_the_reference_runs_is_rejected():
    # A foreign call through ctypes.PyDLL keeps the interpreter's lock while it sleeps: the
    # timing thread, back from the torch op, blocks until it is released (off the CPU, not in
    # the run queue); its reference samples read slower without any CPU of the candidate's.
    libc = ctypes.PyDLL(None)
    stop = threading.Event()

    def hold() -> None:
        while not stop.is_set():
            libc.usleep(3000)
            time.sleep(0.002)

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    calibrate()  # as the worker does at start
    try:
        quiet = CpuAccount(evaluator=frozenset())
        _timed_reference(quiet, 0.3)
        assert quiet.blocked_share("ref") < 0.05, quiet.record(1)
        assert not any(f["kind"] == "reference_slowed" for f in quiet.findings(1))
        holder = threading.Thread(target=hold)
        holder.start()
        try:
            held = CpuAccount(evaluator=frozenset())
            _timed_reference(held, 0.3)
        finally:
            stop.set()
            holder.join()
    finally:
        torch.set_num_threads(before)
    assert held.blocked_share("ref") > 0.1, held.record(1)
    assert "reference_slowed" in [f["kind"] for f in held.findings(1)]
