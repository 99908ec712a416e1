"""Device and library state the reference shares (read through ctypes on a GPU): a change is
reported and put back; child processes a candidate leaves behind are seen, double-forked
ones too once the process is a subreaper."""
import os
import subprocess
import time

import pytest
import torch

from kernelsmith_worker.device_state import DeviceState, _Setting
from kernelsmith_worker.findings import Hacked
from kernelsmith_worker.integrity import IntegrityGuard, thread_idents
from kernelsmith_worker.os_threads import ThreadWatch, become_subreaper, live_children
from kernelsmith_worker.runner import CandidateChecks


class Knob:
    def __init__(self, value, writable=True):
        self.value, self.writable = value, writable

    def setting(self, label):
        def write(v):
            if self.writable:
                self.value = v
            return self.writable
        return _Setting(label, lambda: self.value, write)


def test_a_changed_setting_is_reported_and_put_back():
    sm, cache = Knob(0), Knob(0, writable=False)
    state = DeviceState([sm.setting("the SM count target"), cache.setting("cache config")])
    assert state.changes() == []
    sm.value, cache.value = 4, 1
    found = state.changes()
    assert found == ["the SM count target changed from 0 to 4",
                     "cache config changed from 0 to 1 (could not be put back)"]
    assert sm.value == 0
    assert state.changes() == ["cache config changed from 0 to 1 (could not be put back)"]


def test_an_unreadable_setting_at_start_is_not_compared():
    knob = Knob(None)
    state = DeviceState([knob.setting("absent")])
    knob.value = 3
    assert state.changes() == []


def test_candidate_checks_reject_changed_device_state():
    knob = Knob(8192)
    checks = CandidateChecks(IntegrityGuard(), thread_idents(), torch.device("cpu"),
                             ThreadWatch(native_threads=False),
                             DeviceState([knob.setting("cuBLASLt's heuristics cache")]))
    checks("before")
    knob.value = 0
    with pytest.raises(Hacked) as e:
        checks("after ModelNew.forward")
    assert [f["kind"] for f in e.value.findings] == ["device_state_changed"]
    assert knob.value == 8192
    checks("after it was put back")


def _wait_gone(pid):
    for _ in range(100):
        if pid not in live_children():
            return True
        time.sleep(0.05)
    return False


def test_a_child_process_left_running_is_rejected_and_a_finished_one_is_not():
    checks = CandidateChecks(IntegrityGuard(), thread_idents(), torch.device("cpu"),
                             ThreadWatch(native_threads=False))
    subprocess.run(["true"], check=True)  # a compiler run: finished before the check
    checks("after a finished child")
    child = subprocess.Popen(["sleep", "30"])
    try:
        with pytest.raises(Hacked) as e:
            checks("after ModelNew.forward")
        assert [f["kind"] for f in e.value.findings] == ["child_process"]
        assert f"pid {child.pid}" in e.value.findings[0]["detail"]
    finally:
        child.kill()
        child.wait()
    checks("after it ended")


def test_a_double_forked_process_is_still_a_child_of_a_subreaper():
    assert become_subreaper()
    watch = ThreadWatch(native_threads=False)
    out = subprocess.run(["sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"], check=True,
                         capture_output=True, text=True)
    orphan = int(out.stdout.strip())
    try:
        assert any(f"pid {orphan}" in c for c in watch.new_children())
    finally:
        subprocess.run(["kill", str(orphan)], check=False)
    assert _wait_gone(orphan)  # a zombie of ours until reaped: not a live child
    os.waitpid(orphan, 0)
