"""The kernel log's set-up: where it finds CUPTI and its headers, what it says when it cannot
start. Recording itself needs a CUDA device (bench/kernel_log/overhead.py checks it there)."""
from pathlib import Path

import pytest

from conftest import use_cache_dir
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
    use_cache_dir(monkeypatch, tmp_path)
    lib = kernel_log._loaded_cupti()
    if lib is None or kernel_log._headers_for(lib) is None:
        pytest.skip("this torch has no libcupti with headers (a CPU build)")
    path, cupti = kernel_log.build()
    assert Path(path).is_file() and cupti == lib


class _Fn:
    """A ctypes function stand-in: callable, with restype/argtypes to set."""

    def __init__(self, fn):
        self.fn = fn
        self.errcheck = None

    def __call__(self, *args):
        return self.fn(*args)


MARKER = b"void at::cuda::(anonymous namespace)::spin_kernel(long)"


class FakeLib:
    """kernel_log.cpp's interface over counters a test moves: `launches`, `graphs` (graph
    launches) and `direct` records since the start, `controls` starts/pauses/resumes; every
    take holds the evaluator's marker kernel when `alive`."""

    def __init__(self):
        self.launches = self.graphs = self.direct = self.controls = 0
        self.alive = True

        def counts(launches, graphs, direct):
            launches._obj.value, graphs._obj.value = self.launches, self.graphs
            direct._obj.value = self.direct

        def start():
            self.controls += 1
            return 0

        def group(i, stream, count, total):
            if i != 0 or not self.alive:
                return None
            stream._obj.value, count._obj.value, total._obj.value = 7, 1, 1000
            return MARKER
        for name, fn in {"ks_klog_start": start, "ks_klog_pause": start,
                         "ks_klog_resume": start,
                         "ks_klog_take": lambda: 1 if self.alive else 0,
                         "ks_klog_group": group, "ks_klog_records": lambda: 0,
                         "ks_klog_dropped": lambda: 0, "ks_klog_error": lambda c: b"err",
                         "ks_klog_counts": counts,
                         "ks_klog_controls": lambda: self.controls}.items():
            setattr(self, name, _Fn(fn))

    def window(self, launched, recorded, graphs=0):
        """A window in which `launched` kernels (and the marker) were launched, `recorded`
        (and the marker) recorded."""
        self.launches += launched + 1
        self.direct += recorded + 1
        self.graphs += graphs


@pytest.fixture
def no_device(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: None)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)


@pytest.fixture
def fake(monkeypatch, no_device):
    """(library, log): the log over a FakeLib, installed as the worker's library."""
    lib = FakeLib()
    monkeypatch.setattr(kernel_log, "_LIB", lib)
    return lib, kernel_log.KernelLog(lib)


def test_launches_without_records_mean_the_records_were_switched_off(fake):
    lib, log = fake
    log.start()
    lib.window(5, 5)
    assert log.take() == []  # the marker is left out
    lib.window(4, 1)
    with pytest.raises(kernel_log.KernelLogError, match="3 kernel launch"):
        log.take()
    lib.window(2, 2)
    assert log.take() == []  # each window is judged on its own
    lib.window(4, 1)
    assert log.take("alive") == []  # windows of the evaluator's own captures: lenient


def test_a_graph_launched_inside_accounted_calls_is_refused(fake):
    lib, log = fake
    lib.window(1, 1, graphs=1)
    with pytest.raises(kernel_log.KernelLogError, match="graph launch"):
        log.take()
    lib.window(1, 1, graphs=5)
    assert log.take("alive") == []  # the evaluator's own replays


def test_a_log_that_misses_its_marker_is_dead(fake):
    lib, log = fake
    lib.alive = False  # detached behind the evaluator's back: no records, no launches
    with pytest.raises(kernel_log.KernelLogError, match="marker"):
        log.take("alive")
    assert log.take("none") == []  # a window nobody reads is not judged


def test_a_pause_the_evaluator_did_not_make_is_seen(fake):
    lib, log = fake
    log.start()
    with log.paused():
        pass
    lib.window(0, 0)
    assert log.take() == []
    lib.ks_klog_pause()  # the candidate, through the library
    lib.ks_klog_resume()
    lib.window(0, 0)
    with pytest.raises(kernel_log.KernelLogError, match="paused or restarted"):
        log.take()


def test_the_log_object_cannot_be_given_another_take(fake):
    lib, log = fake
    with pytest.raises(AttributeError):
        log.take = lambda *a: []  # an instance attribute shadowing the method
    lib.window(0, 0)
    object.__setattr__(log, "_lib", FakeLib())  # its library swapped for a proxy
    with pytest.raises(kernel_log.KernelLogError, match="replaced or wrapped"):
        log.take()
    object.__setattr__(log, "_lib", lib)
    lib.ks_klog_group.errcheck = lambda result, func, args: b"Memset (Device)"
    with pytest.raises(kernel_log.KernelLogError, match="replaced or wrapped"):
        log.take()
