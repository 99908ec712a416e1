"""What a cuda candidate's torch extension may import (cuda_ext_checks.py), on small libraries
built by the system compiler: the names a cheat needs are refused, a kernel's host code is not."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from kernelsmith_worker import cuda_ext_checks

pytestmark = pytest.mark.skipif(shutil.which("cc") is None or shutil.which("nm") is None,
                                reason="needs a C compiler and nm")


def _library(tmp_path, body: str):
    src = tmp_path / "x.c"
    src.write_text(body)
    out = tmp_path / "libx.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(out)], check=True)
    return out


def test_the_imports_a_cheat_needs_are_refused(tmp_path):
    lib = _library(tmp_path, """
        void* dlsym(void*, const char*); void* PyEval_GetFrame(void); int fork(void);
        int cudaDeviceSetLimit(int, unsigned long); int cublasSgemm_v2(void);
        void f(void) { dlsym(0, "x"); PyEval_GetFrame(); fork(); cudaDeviceSetLimit(0, 0);
                       cublasSgemm_v2(); }""")
    found = cuda_ext_checks.extension_findings(lib)
    names = {f.split(" ", 1)[0] for f in found}
    assert names == {"dlsym", "PyEval_GetFrame", "fork", "cudaDeviceSetLimit", "cublasSgemm_v2"}


def test_a_kernels_host_code_is_not(tmp_path):
    # what pybind11's bindings and a launch import (see an honest extension's nm)
    lib = _library(tmp_path, """
        void* PyFrame_GetBack(void*); void* PyDict_GetItemString(void*, const char*);
        int cudaLaunchKernel(void); void* PyInterpreterState_GetDict(void*);
        void f(void) { PyFrame_GetBack(0); PyDict_GetItemString(0, "a"); cudaLaunchKernel();
                       PyInterpreterState_GetDict(0); }""")
    assert cuda_ext_checks.extension_findings(lib) == []


def test_aten_below_the_dispatcher_is_refused_and_its_utilities_are_not():
    why = cuda_ext_checks._why
    assert why("_ZN2at4cuda17native_layer_normERKNS_6TensorEN3c108ArrayRefIlEE")
    assert why("_ZN2at6native7softmaxERKNS_6TensorElSt8optionalIN3c1010ScalarTypeEE")
    assert why("_ZN2at4cuda4blas4gemmIfEEvv")
    assert why("_ZN2at4cuda25getCurrentCUDABlasHandleEv")
    assert why("_ZN2at4cuda26getCurrentDevicePropertiesEv") is None
    assert why("_ZN3c104cuda20getCurrentCUDAStreamEa") is None
