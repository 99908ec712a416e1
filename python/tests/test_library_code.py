"""library_code: cpu_ext libraries that reach BLAS or the dynamic loader are refused."""

from __future__ import annotations

import pytest

from kernelsmith_worker import cpu_ext, library_code

# sgemm_ by a name the source never spells out: only the library's imports show it.
HIDDEN_SGEMM = r"""
#define JOIN(a, b) a##b
extern "C" void JOIN(sge, mm_)(const char*, const char*, const int*, const int*, const int*,
                               const float*, const float*, const int*, const float*,
                               const int*, const float*, float*, const int*);
extern "C" void gemm1(const float* a, const float* b, float* c) {
  const int one_i = 1; const float one = 1.0f;
  JOIN(sge, mm_)("N", "N", &one_i, &one_i, &one_i, &one, a, &one_i, b, &one_i, &one, c, &one_i);
}
"""
DLSYM = r"""
#include <dlfcn.h>
extern "C" long lookup() { return (long)dlsym(RTLD_DEFAULT, "s" "gemm_"); }
"""
HONEST = r"""
#include <cmath>
#include <cstdint>
#include <vector>
// Not MKL's sgemm_: a GEMM of its own, named like one (comments may name anything).
extern "C" void sgemm(const float* a, const float* b, float* c, int64_t n) {
  std::vector<float> acc(n, 0.0f);
  #pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) acc[i] = std::exp(a[i]) * b[i];
  for (int64_t i = 0; i < n; ++i) c[i] = acc[i];
}
"""


def test_names():
    assert library_code.forbidden("sgemm_") and library_code.forbidden("dlsym@GLIBC_2.34")
    assert library_code.forbidden("cblas_sgemm") and library_code.forbidden("mkl_malloc")
    assert library_code.forbidden("sgemm")  # imported by a library: MKL's C name
    assert library_code.forbidden("sgemm", in_source=True) is None  # a kernel's own name
    for ok in ("memcpy", "expf", "GOMP_parallel", "omp_get_thread_num", "_ZdlPv"):
        assert library_code.forbidden(ok) is None


def test_imported_blas_symbol_is_found_without_its_name_in_the_source(cache):
    path, _ = cpu_ext._compile("hidden_sgemm", HIDDEN_SGEMM)
    assert library_code.source_findings(HIDDEN_SGEMM) == []
    assert any(f.startswith("sgemm_ ") for f in library_code.library_findings(path))


def test_dlsym_library_is_refused_and_recorded(cache):
    with pytest.raises(cpu_ext.LibraryCodeError, match="dlsym"):
        cpu_ext.load("dl_lookup", DLSYM, {"lookup": "int64()"})
    assert len(library_code.refusals()) == 1 and "dlsym" in library_code.refusals()[0]


def test_honest_library_loads(cache):
    lib = cpu_ext.load("own_gemm", HONEST, {"sgemm": "void(const float*, const float*, "
                                                     "float*, int64)"})
    assert lib.sgemm is not None and library_code.refusals() == []


def test_python_code_naming_routines():
    src = ("import ctypes\nlib = ctypes.CDLL('libtorch_cpu.so')\nf = lib.sgemm_\n"
           "g = getattr(lib, 'cblas_sgemm')\n# a comment on dgemm_ is fine\n"
           "CPP = 'void f() { /* dlsym */ }'\n")
    found = library_code.python_findings(src)
    assert found == ["line 3: sgemm_ (BLAS/LAPACK/vendor library routine)",
                     "line 4: cblas_sgemm (BLAS/LAPACK/vendor library routine)"]


SIGNALLER = r"""
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
static void on(int) {}
extern "C" int arm() {
  struct sigaction sa{};
  sa.sa_handler = on;
  sigaction(SIGUSR2, &sa, nullptr);
  return (int)syscall(SYS_tgkill, getpid(), getpid(), SIGUSR2);
}
"""
RAW_SYSCALL = r"""
extern "C" long my_pid() {
  long ret;
#if defined(__x86_64__)
  asm volatile("syscall" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");
#else
  ret = 0;
#endif
  return ret;
}
"""
GIL = r"""
extern "C" int PyGILState_Ensure();
extern "C" void PyGILState_Release(int);
extern "C" void hold() { PyGILState_Release(PyGILState_Ensure()); }
"""


def test_signals_syscalls_and_the_interpreter_api_are_refused(cache):
    found = library_code.library_findings(cpu_ext._compile("signaller", SIGNALLER)[0])
    assert any(f.startswith("sigaction ") for f in found), found
    assert not any(f.startswith("syscall ") for f in found), found  # std::thread's futexes
    found = library_code.library_findings(cpu_ext._compile("gil", GIL)[0])
    assert any(f.startswith("PyGILState_Ensure (the interpreter") for f in found), found
    for name in ("tgkill", "pthread_sigmask", "mprotect", "setitimer", "PyEval_SaveThread",
                 "clone", "fork", "posix_spawn", "execve", "system"):
        assert library_code.forbidden(name), name
    # in C++ source the words are ordinary names (a variable called signal is fine)
    assert library_code.forbidden("signal", in_source=True) is None


@pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="x86-64 asm")
def test_a_system_call_instruction_in_the_library_is_refused(cache):
    path, _ = cpu_ext._compile("raw_syscall", RAW_SYSCALL)
    assert [insn for _, insn in library_code.system_calls(path)] == ["syscall"]
    assert any("system call made by the library" in f
               for f in library_code.library_findings(path))
    assert library_code.system_calls(cpu_ext.build("own_gemm", HONEST)[0]) == ()
