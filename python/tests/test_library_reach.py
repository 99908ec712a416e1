"""library_reach: names a candidate reaches are judged by the library they resolve into."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import threading
from types import SimpleNamespace

import pytest
import torch

from kernelsmith_worker import cpu_ext, library_code, library_reach

TORCH_CPU = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")


def torch_cpu():
    """torch's loaded libtorch_cpu.so as a ctypes library would hold it, opened without an
    audit event (this file counts as candidate code, and loading it as such is refused once a
    test has installed the hook)."""
    handle = library_reach._DLOPEN(TORCH_CPU.encode(), os.RTLD_LAZY | os.RTLD_NOLOAD)
    assert handle, "torch's libtorch_cpu.so is loaded"
    return SimpleNamespace(_handle=handle)

OWN = r"""
#include <cmath>
#include <cstdint>
extern "C" void expo(const float* a, float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) b[i] = std::exp(a[i]);
}
"""
# MKL's upper-case alias, declared and linked against torch's library by the candidate's flags
LINKED = r"""
extern "C" void SGEMM(const char*, const char*, const int*, const int*, const int*,
                      const float*, const float*, const int*, const float*, const int*,
                      const float*, float*, const int*);
extern "C" void gemm1(const float* a, const float* b, float* c) {
  const int one_i = 1; const float one = 1.0f;
  SGEMM("N", "N", &one_i, &one_i, &one_i, &one, a, &one_i, b, &one_i, &one, c, &one_i);
}
"""


def test_runtime_libraries():
    import os

    import torch

    bundled = os.path.join(os.path.dirname(torch.__file__), "lib", "libgomp-a34b3233.so.1")
    for ok in ("/lib/x86_64-linux-gnu/libc.so.6", "libm.so.6", "libstdc++.so.6",
               "/usr/lib/libgomp.so.1", bundled, "libpython3.12.so",
               "linux-vdso.so.1", "/lib64/ld-linux-x86-64.so.2", ""):
        assert library_reach.is_runtime(ok), ok
    # a file is judged by where it is, not by its name: a copy of any library under a
    # runtime library's name elsewhere is not the runtime
    for bad in (TORCH_CPU, "libopenblas64_p-r0-0cf96a72.3.23.dev.so", "libcublas.so.12",
                "libmkl_rt.so.2", "libcuda.so.1", "libc10.so", "/tmp/libgomp-16c01abc.so",
                "/tmp/x/libc.so.6", "torch/lib/libgomp-a34b3233.so.1"):
        assert not library_reach.is_runtime(bad), bad


def test_own_builds_are_runtime(cache):
    path, _ = cpu_ext.build("expo", OWN)
    assert library_reach.is_runtime(str(path))


def test_own_build_is_the_checked_file_not_a_folder(cache, monkeypatch):
    path, _ = cpu_ext.build("expo", OWN)
    # the environment the candidate can write is read once, at the worker's start
    monkeypatch.setenv("KS_CACHE_DIR", os.path.dirname(os.path.dirname(TORCH_CPU)))
    monkeypatch.setenv("CXX", "/tmp/not-a-compiler")
    assert cpu_ext.cache_root() == cache and cpu_ext.compiler() != "/tmp/not-a-compiler"
    assert not library_reach.is_runtime(TORCH_CPU)
    # another file in the cache folder is not an own build, nor is the built file rewritten
    copy = path.parent / "libother.so"
    subprocess.run(["cp", str(path), str(copy)], check=True)  # (the hook refuses Python's copy)
    assert not library_reach.is_runtime(str(copy))
    path.write_bytes(path.read_bytes() + b"\0")
    assert not library_reach.is_runtime(str(path))


def test_lookups_are_judged_by_where_they_resolve():
    torch_lib = torch_cpu()._handle
    libc = ctypes.CDLL(None)._handle
    for name in ("SGEMM", "sgemm", "SGEMM_64", "vsExp", "sgemv"):
        assert library_reach.foreign(torch_lib, name) == "defined by libtorch_cpu.so", name
    assert library_reach.foreign(libc, "memcpy") is None
    assert library_reach.foreign(libc, "expf") is None
    assert library_reach.foreign(libc, "dlsym") == "run-time symbol lookup"
    assert library_reach.foreign(libc, "no_such_symbol_anywhere") is None


def test_candidate_lookup_is_denied_and_recorded(cache):
    # the hook is called as the interpreter would (this test file is candidate code: neither
    # installed nor the worker's); installing it here would stay for the whole test process
    hook = library_reach.make_hook()
    lib = torch_cpu()
    with pytest.raises(library_reach.LookupRefused, match="SGEMM"):
        hook("ctypes.dlsym", (lib, "SGEMM"))
    with pytest.raises(library_reach.LookupRefused, match="vsExp"):
        hook("ctypes.dlsym/handle", (lib._handle, "vsExp"))
    hook("ctypes.dlsym", (ctypes.CDLL(None), "memcpy"))  # the C library: fine
    hook("ctypes.dlsym", (lib, 7))  # an ordinal: nothing to judge
    assert len(library_code.refusals()) == 2 and "libtorch_cpu.so" in library_code.refusals()[0]


def test_reading_the_memory_map_or_a_library_file_is_denied(cache):
    hook = library_reach.make_hook()
    for path in ("/proc/self/maps", b"/proc/12/task/13/smaps", "/proc/self/mem", TORCH_CPU):
        with pytest.raises(library_reach.LookupRefused, match="opened"):
            hook("open", (path, "r", 0))
    hook("open", ("/proc/self/status", "r", 0))
    hook("open", ("/tmp/data.bin", "rb", 0))
    assert len(library_code.refusals()) == 4


def test_library_linked_against_torch_is_refused(cache, monkeypatch):
    # (the flags come before the source: without --no-as-needed the library is dropped)
    # (built as the evaluator would: candidate code may not pass these flags at all)
    flags = ["-Wl,--no-as-needed", f"-L{os.path.dirname(TORCH_CPU)}", "-ltorch_cpu"]
    with monkeypatch.context() as m:
        m.setattr(cpu_ext, "_evaluator_called", lambda: True)
        path, _ = cpu_ext._compile("linked_sgemm", LINKED, extra_cflags=flags)
    found = library_reach.import_findings(path)
    assert any(f.startswith("libtorch_cpu.so ") for f in found), found
    with pytest.raises(library_reach.LookupRefused, match="libtorch_cpu"):
        library_reach.make_hook()("ctypes.dlopen", (str(path),))
    with pytest.raises(cpu_ext.LibraryCodeError, match="-Wl,--no-as-needed"):
        cpu_ext.load("linked_sgemm", LINKED, {"gemm1": "void(float*, float*, float*)"},
                     extra_cflags=flags)
    assert len(library_code.refusals()) == 2


def test_own_library_imports_only_the_runtime(cache):
    path, _ = cpu_ext.build("expo", OWN)
    assert library_reach.import_findings(path) == []
    assert library_reach.needed(path)  # libc at least


GIL = r"""
extern "C" int PyGILState_Ensure(void);
extern "C" void PyGILState_Release(int);
extern "C" void hold(void) { PyGILState_Release(PyGILState_Ensure()); }
"""


def test_libraries_candidate_code_loads_pass_the_library_checks(cache):
    hook = library_reach.make_hook()
    bad, _ = cpu_ext._compile("gil_holder", GIL)  # built without checks, loaded by hand
    with pytest.raises(library_reach.LookupRefused, match="PyGILState_Ensure"):
        hook("ctypes.dlopen", (str(bad),))
    with pytest.raises(library_reach.LookupRefused, match="libc10.so"):
        hook("ctypes.dlopen", (TORCH_CPU,))
    with pytest.raises(library_reach.LookupRefused, match="not a runtime library"):
        hook("ctypes.dlopen", ("libtorch_cpu.so",))
    # a copy of a runtime library's name elsewhere is judged by its code, not its name
    fake_libc = cache / "libc.so.6"
    subprocess.run(["cp", str(bad), str(fake_libc)], check=True)
    with pytest.raises(library_reach.LookupRefused, match="PyGILState"):
        hook("ctypes.dlopen", (str(fake_libc),))
    assert len(library_code.refusals()) == 4
    clean, _ = cpu_ext._compile("clean_expo", OWN)  # not checked by cpu_ext, but clean
    for ok in (str(clean), b"libm.so.6", "libmvec.so.1", None):
        hook("ctypes.dlopen", (ok,))
    hook("ctypes.dlopen", (ctypes.util.find_library("c"),))
    assert len(library_code.refusals()) == 4


def test_build_called_by_candidate_code_is_checked(cache, monkeypatch):
    with pytest.raises(cpu_ext.LibraryCodeError, match="PyGILState"):
        cpu_ext.build("gil_holder", GIL)
    assert library_code.refusals()
    library_code.clear()
    path, _ = cpu_ext.build("expo", OWN)  # clean: built, checked and recorded
    assert cpu_ext.checked_library(str(path))
    # the evaluator's own helpers (pc_sample: sigaction, setitimer) build without the checks
    monkeypatch.setattr(cpu_ext, "_evaluator_called", lambda: True)
    helper, _ = cpu_ext.build("gil_helper", GIL)
    assert cpu_ext.checked_library(str(helper)) and not library_code.refusals()


def test_a_thread_started_on_the_loader_is_candidate_code(cache, monkeypatch):
    # Thread(target=ctypes.CDLL, args=(path,)): only the standard library's frames are above
    # the check, and that is candidate code (the worker's own work has a frame of its own)
    bad, _ = cpu_ext._compile("gil_holder", GIL)
    raised = []
    monkeypatch.setattr(threading, "excepthook", lambda a: raised.append(a.exc_type))
    t = threading.Thread(target=library_reach.make_hook(), args=("ctypes.dlopen", (str(bad),)))
    t.start()
    t.join()
    assert raised == [library_reach.LookupRefused] and library_code.refusals()


def test_the_hook_keeps_its_state_out_of_candidate_reach(cache, monkeypatch):
    hook = library_reach.make_hook()
    with monkeypatch.context() as m:
        m.setattr(library_reach, "_busy", True, raising=False)  # r15_c05's switch
        # and cpu_ext's record of its libraries swapped for one that takes anything
        m.setattr(cpu_ext, "checked_library", lambda path: True)
        with pytest.raises(library_reach.LookupRefused, match="SGEMM"):
            hook("ctypes.dlsym", (torch_cpu(), "SGEMM"))
        with pytest.raises(library_reach.LookupRefused, match="libc10"):
            hook("ctypes.dlopen", (TORCH_CPU,))
    # the installed hook is not held by the module, and the record of checked libraries
    # is not a module-level container either
    path, _ = cpu_ext.build("expo", OWN)
    for mod in (library_reach, cpu_ext):
        for name, val in vars(mod).items():
            assert getattr(val, "__name__", "") != "hook", (mod.__name__, name)
            assert not (isinstance(val, (set, dict, list)) and str(path) in map(str, val)), name
