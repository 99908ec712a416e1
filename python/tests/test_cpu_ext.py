"""cpu_ext: signatures, compiling, caching, argument checks, launch accounting."""

from __future__ import annotations

import ctypes

import pytest
import torch

from kernelsmith_worker import cpu_ext
from kernelsmith_worker.launches import active_recorder

ADD = r"""
#include <cstdint>
extern "C" void add(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
extern "C" double dot(const double* a, const double* b, int64_t n) {
  double s = 0; for (int64_t i = 0; i < n; ++i) s += a[i] * b[i]; return s;
}
"""
ADD_FUNCS = {"add": "void(const float*, const float*, float*, int64)",
             "dot": "double(const double*, const double*, int64)"}


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KS_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_parse_signature():
    sig = cpu_ext.parse_signature("void(const float*, float *, int64, double, bool, void*)")
    assert sig.ret is None
    assert [a.pointer for a in sig.args] == [True, True, False, False, False, True]
    assert sig.args[0].dtype == torch.float32 and sig.args[5].dtype is None
    assert sig.args[2].ctype is ctypes.c_int64
    assert cpu_ext.parse_signature("int32()").ret is ctypes.c_int32
    assert cpu_ext.parse_signature("float(void)").args == ()
    for bad in ("void", "void(matrix*)", "tensor(float*)", "void(float**)"):
        with pytest.raises(ValueError):
            cpu_ext.parse_signature(bad)


def test_load_call_and_cache(cache):
    lib = cpu_ext.load("add", ADD, ADD_FUNCS)
    a, b = torch.arange(5, dtype=torch.float32), torch.ones(5)
    out = torch.empty(5)
    assert lib.add(a, b, out, 5) is None
    assert torch.equal(out, a + 1)
    x = torch.arange(4, dtype=torch.float64)
    assert lib.dot(x, x, 4) == pytest.approx(14.0)
    assert lib.path.parent.parent == cache / "cpu_ext"
    mtime = lib.path.stat().st_mtime_ns
    again = cpu_ext.load("add", ADD, ADD_FUNCS)
    assert again.path == lib.path and lib.path.stat().st_mtime_ns == mtime  # no rebuild
    other = cpu_ext.load("add", ADD + "\n// changed\n", ADD_FUNCS)
    assert other.path != lib.path


def test_argument_checks(cache):
    lib = cpu_ext.load("add", ADD, ADD_FUNCS)
    a = torch.ones(4, 4)
    out = torch.empty(4, 4)
    with pytest.raises(ValueError, match=r"add: argument 0 \(const float\*\) is not contiguous"):
        lib.add(a.t(), a, out, 16)
    with pytest.raises(TypeError, match="expects torch.float32, got torch.float64"):
        lib.add(a.double(), a, out, 16)
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        lib.add([1.0], a, out, 16)
    with pytest.raises(TypeError, match="expects 4 arguments, got 3"):
        lib.add(a, a, out)
    with pytest.raises(TypeError, match="expects an int"):
        lib.add(a, a, out, 1.5)


def test_compile_error_carries_the_log(cache):
    with pytest.raises(cpu_ext.CompileError) as info:
        cpu_ext.load("broken", 'extern "C" void f() { not_a_function(); }', {"f": "void()"})
    assert "does not compile" in str(info.value)
    assert "not_a_function" in info.value.log


def test_missing_extern_c_is_explained(cache):
    with pytest.raises(cpu_ext.CompileError, match='extern "C"'):
        cpu_ext.load("mangled", "void g() {}", {"g": "void()"})


def test_bad_name_and_empty_functions(cache):
    with pytest.raises(ValueError):
        cpu_ext.load("not a name", ADD, ADD_FUNCS)
    with pytest.raises(ValueError):
        cpu_ext.load("add", ADD, {})


def test_calls_are_counted_and_timed(cache, worker_ctx):
    rec = active_recorder()
    assert rec is worker_ctx.recorder
    lib = cpu_ext.load("add", ADD, ADD_FUNCS)
    rec.reset()
    a = torch.ones(3)
    lib.add(a, a, torch.empty(3), 3)
    lib.add(a, a, torch.empty(3), 3)
    assert rec.counts == {"add.add": 2}
    assert rec.inside_ns > 0
    assert not rec.in_kernel()
    rec.reset()
