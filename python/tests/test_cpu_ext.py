"""cpu_ext: signatures, compiling, caching, argument checks, launch accounting."""

from __future__ import annotations

import ctypes

import pytest
import torch

from conftest import use_cache_dir
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
    use_cache_dir(monkeypatch, tmp_path)
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


STATIC_BLAS_FLAGS = ["-Wl,--exclude-libs,ALL", "-Wl,--defsym,xerbla_=xstub", "-Wl,-u,sgemm_",
                     "/usr/lib/x86_64-linux-gnu/libblas.a"]


def test_extra_cflags_allow_code_generation_and_runtime_links():
    from kernelsmith_worker.compile_flags import flag_findings, refused_flag

    for ok in ("-O2", "-Ofast", "-march=native", "-mtune=znver3", "-mavx2", "-mno-fma",
               "-ffast-math", "-fopenmp", "-fno-math-errno", "-fvisibility=hidden", "-DN=4",
               "-UNDEBUG", "-std=c++20", "-Wall", "-Wno-unused-variable", "-Werror", "-w",
               "-g", "-g3", "-pthread", "-lm", "-lmvec", "-lpthread", "-lgomp",
               "-I/usr/include", "-I/usr/local/include/x"):
        assert refused_flag(ok) is None, ok
    for bad, why in (("-Wl,--exclude-libs,ALL", "not a code-generation"),
                     ("-Xlinker", "not a code-generation"), ("-B/tmp/tools", "not a code"),
                     ("-L/usr/lib", "not a code"), ("-specs=/tmp/s", "not a code"),
                     ("-include", "not a code"), ("-x", "not a code"), ("@/tmp/args", "input"),
                     ("/usr/lib/x86_64-linux-gnu/libblas.a", "input file"),
                     ("-fplugin=/tmp/p.so", "plugin"), ("-fuse-ld=lld", "linker"),
                     ("-mllvm", "not a code"), ("-lblas", "outside the C/C++ runtime"),
                     ("-ltorch_cpu", "outside"), ("-l:libblas.a", "not a code"),
                     ("-I/tmp/headers", "header folder"), ("-Wa,-K", "not a code"),
                     ("-static", "not a code"), ("-o", "not a code"), ("-E", "not a code")):
        assert why in (refused_flag(bad) or ""), bad
    assert flag_findings("-O2") and flag_findings([3]) and flag_findings(None) == []


def test_refused_extra_cflags_are_a_library_code_refusal(cache):
    from kernelsmith_worker import library_code

    library_code.clear()
    with pytest.raises(cpu_ext.LibraryCodeError, match="'-Wl,--exclude-libs,ALL'.*allowed"):
        cpu_ext.load("add", ADD, ADD_FUNCS, extra_cflags=STATIC_BLAS_FLAGS)
    with pytest.raises(cpu_ext.LibraryCodeError, match="libblas.a' is an input file"):
        cpu_ext.build("add", ADD, extra_cflags=STATIC_BLAS_FLAGS[3:])
    assert len(library_code.refusals()) == 2 and not list(cache.glob("cpu_ext/*/*.so"))
    library_code.clear()
    lib = cpu_ext.load("add", ADD, ADD_FUNCS, extra_cflags=["-lmvec", "-O2", "-DUNUSED=1"])
    assert lib.dot(torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64),
                   3) == pytest.approx(3.0)
    assert not library_code.refusals()


def test_names_are_c_identifiers_for_every_entry_point(cache):
    for bad in ("../../escape", "a b", ""):
        with pytest.raises(ValueError, match="C identifier"):
            cpu_ext.build(bad, ADD)



def test_the_evaluators_own_build_changed_on_disk_is_tampering(monkeypatch):
    # a library the evaluator built (the sampler, the kernel log) lives in the cache the
    # workers share; one written over it during a request would be loaded by the next worker
    import os

    build, _, _, tampered_builds = cpu_ext._entry_points()  # a record of its own
    monkeypatch.setattr(cpu_ext, "_evaluator_called", lambda: True)
    source = 'extern "C" int f() { return 1; }'
    path, _ = build("ks_tamper_probe", source, openmp=False)
    other, _ = build("ks_tamper_other", 'extern "C" int f() { return 2; }', openmp=False)
    assert tampered_builds() == []
    os.replace(other, path)  # another library renamed into its place
    found = tampered_builds()
    assert [f["kind"] for f in found] == ["evaluator_tampering", "evaluator_tampering"], found
    assert not path.exists()  # removed: the next worker builds it again
    assert tampered_builds() == []
    path, _ = build("ks_tamper_probe", source, openmp=False)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # a time set back still changes ctime
    assert [f["kind"] for f in tampered_builds()] == ["evaluator_tampering"]
