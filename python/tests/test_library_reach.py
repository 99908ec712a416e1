"""library_reach: names a candidate reaches are judged by the library they resolve into."""

from __future__ import annotations

import ctypes
import os

import pytest
import torch

from kernelsmith_worker import cpu_ext, library_code, library_reach

TORCH_CPU = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")

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
    for ok in ("/lib/x86_64-linux-gnu/libc.so.6", "libm.so.6", "libstdc++.so.6",
               "/usr/lib/libgomp.so.1", "torch/lib/libgomp-a34b3233.so.1", "libpython3.12.so",
               "linux-vdso.so.1", "/lib64/ld-linux-x86-64.so.2", ""):
        assert library_reach.is_runtime(ok), ok
    for bad in (TORCH_CPU, "libopenblas64_p-r0-0cf96a72.3.23.dev.so", "libcublas.so.12",
                "libmkl_rt.so.2", "libcuda.so.1", "libc10.so"):
        assert not library_reach.is_runtime(bad), bad


def test_own_builds_are_runtime(cache):
    path, _ = cpu_ext.build("expo", OWN)
    assert library_reach.is_runtime(str(path))


def test_lookups_are_judged_by_where_they_resolve():
    torch_cpu = ctypes.CDLL(TORCH_CPU)._handle
    libc = ctypes.CDLL(None)._handle
    for name in ("SGEMM", "sgemm", "SGEMM_64", "vsExp", "sgemv"):
        assert library_reach.foreign(torch_cpu, name) == "defined by libtorch_cpu.so", name
    assert library_reach.foreign(libc, "memcpy") is None
    assert library_reach.foreign(libc, "expf") is None
    assert library_reach.foreign(libc, "dlsym") == "run-time symbol lookup"
    assert library_reach.foreign(libc, "no_such_symbol_anywhere") is None


def test_candidate_lookup_is_denied_and_recorded(cache):
    # the hook is called as the interpreter would (this test file is candidate code: neither
    # installed nor the worker's); installing it here would stay for the whole test process
    lib = ctypes.CDLL(TORCH_CPU)
    with pytest.raises(library_reach.LookupRefused, match="SGEMM"):
        library_reach._hook("ctypes.dlsym", (lib, "SGEMM"))
    with pytest.raises(library_reach.LookupRefused, match="vsExp"):
        library_reach._hook("ctypes.dlsym/handle", (lib._handle, "vsExp"))
    library_reach._hook("ctypes.dlsym", (ctypes.CDLL(None), "memcpy"))  # the C library: fine
    library_reach._hook("ctypes.dlsym", (lib, 7))  # an ordinal: nothing to judge
    assert len(library_code.refusals()) == 2 and "libtorch_cpu.so" in library_code.refusals()[0]


def test_reading_the_memory_map_or_a_library_file_is_denied(cache):
    for path in ("/proc/self/maps", b"/proc/12/task/13/smaps", "/proc/self/mem", TORCH_CPU):
        with pytest.raises(library_reach.LookupRefused, match="opened"):
            library_reach._hook("open", (path, "r", 0))
    library_reach._hook("open", ("/proc/self/status", "r", 0))
    library_reach._hook("open", ("/tmp/data.bin", "rb", 0))
    assert len(library_code.refusals()) == 4


def test_library_linked_against_torch_is_refused(cache):
    # (the flags come before the source: without --no-as-needed the library is dropped)
    flags = ["-Wl,--no-as-needed", f"-L{os.path.dirname(TORCH_CPU)}", "-ltorch_cpu"]
    path, _ = cpu_ext.build("linked_sgemm", LINKED, extra_cflags=flags)
    found = library_reach.import_findings(path)
    assert any(f.startswith("libtorch_cpu.so ") for f in found), found
    with pytest.raises(cpu_ext.LibraryCodeError, match="libtorch_cpu"):
        cpu_ext.load("linked_sgemm", LINKED, {"gemm1": "void(float*, float*, float*)"},
                     extra_cflags=flags)
    assert library_code.refusals()


def test_own_library_imports_only_the_runtime(cache):
    path, _ = cpu_ext.build("expo", OWN)
    assert library_reach.import_findings(path) == []
    assert library_reach.needed(path)  # libc at least
