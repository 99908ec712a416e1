"""The kernel log's set-up: where it finds CUPTI and its headers, what it says when it cannot
start. Recording itself needs a CUDA device (bench/kernel_log/overhead.py checks it there)."""
from pathlib import Path

import pytest

from kernelsmith_worker import kernel_log


def test_headers_are_found_beside_a_pip_package_or_a_toolkit(tmp_path):
    pip = tmp_path / "nvidia" / "cu13"
    (pip / "lib").mkdir(parents=True)
    (pip / "include").mkdir()
    (pip / "include" / "cupti.h").write_text("")
    assert kernel_log._headers_for(pip / "lib" / "libcupti.so.13") == pip / "include"
    toolkit = tmp_path / "cuda" / "extras" / "CUPTI"
    (toolkit / "lib64").mkdir(parents=True)
    (toolkit / "include").mkdir()
    (toolkit / "include" / "cupti.h").write_text("")
    assert kernel_log._headers_for(toolkit / "lib64" / "libcupti.so") == toolkit / "include"
    assert kernel_log._headers_for(tmp_path / "lib" / "libcupti.so") is None


def test_a_worker_without_a_device_has_no_log_and_says_why():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA machine: the log starts there")
    assert kernel_log.start() is None
    assert kernel_log.current() is None
    assert "could not start" in kernel_log.why_not()


def test_the_recorder_compiles_against_the_cupti_torch_ships(tmp_path, monkeypatch):
    monkeypatch.setenv("KS_CACHE_DIR", str(tmp_path))
    lib = kernel_log._loaded_cupti()
    if lib is None or kernel_log._headers_for(lib) is None:
        pytest.skip("this torch has no libcupti with headers (a CPU build)")
    path, cupti = kernel_log.build()
    assert Path(path).is_file() and cupti == lib


class _Fn:
    """A ctypes function stand-in: callable, with restype/argtypes to set."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)


class FakeLib:
    """kernel_log.cpp's interface over counters a test moves: no groups, `launches` and
    `direct` records since the start, `controls` starts/pauses/resumes."""

    def __init__(self):
        self.launches = self.direct = self.controls = 0

        def counts(launches, direct):
            launches._obj.value, direct._obj.value = self.launches, self.direct

        def start():
            self.controls += 1
            return 0
        for name, fn in {"ks_klog_start": start, "ks_klog_pause": start,
                         "ks_klog_resume": start, "ks_klog_take": lambda: 0,
                         "ks_klog_group": lambda *a: None, "ks_klog_records": lambda: 0,
                         "ks_klog_dropped": lambda: 0, "ks_klog_error": lambda c: b"err",
                         "ks_klog_counts": counts,
                         "ks_klog_controls": lambda: self.controls}.items():
            setattr(self, name, _Fn(fn))


def test_launches_without_records_mean_the_records_were_switched_off():
    lib = FakeLib()
    log = kernel_log.KernelLog(lib)
    log.start()
    lib.launches, lib.direct = 5, 5
    assert log.take() == []
    lib.launches, lib.direct = 9, 6  # 4 launched, 1 recorded
    with pytest.raises(kernel_log.KernelLogError, match="3 kernel launch"):
        log.take()
    lib.launches, lib.direct = 10, 7
    assert log.take() == []  # each window is judged on its own


def test_a_pause_the_evaluator_did_not_make_is_seen():
    lib = FakeLib()
    log = kernel_log.KernelLog(lib)
    log.start()
    with log.paused():
        pass
    assert log.take() == []
    lib.ks_klog_pause()  # the candidate, through the library
    lib.ks_klog_resume()
    with pytest.raises(kernel_log.KernelLogError, match="paused or restarted"):
        log.take()
