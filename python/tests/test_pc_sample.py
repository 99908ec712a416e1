"""pc_sample: forward's CPU time attributed by program counter (math-library code rejected)."""

from __future__ import annotations

import signal

import pytest
import torch

from kernelsmith_worker import pc_sample


@pytest.fixture(scope="module")
def sampler():
    if not pc_sample.install():
        pytest.skip(pc_sample._Sampler.why_not)
    assert pc_sample._Sampler.rate > 50  # ITIMER_PROF fires at the kernel's tick (100-1000 Hz)
    return pc_sample


@pytest.fixture()
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_names():
    assert pc_sample.is_math("libtorch_cpu.so", "mkl_blas_avx2_sgemm_kernel_0")
    assert pc_sample.is_math("libtorch_cpu.so", "mkl_vml_kernel_sExp_EXHAynn")
    assert pc_sample.is_math("libtorch_cpu.so", "Sleef_expf8_u10")
    assert pc_sample.is_math("libscipy_openblas64_-ff651d7f.so", "?")
    assert pc_sample.is_math("libtorch_cpu.so", "SGEMM")
    for lib, sym in (("libtorch_cpu.so", "?"), ("libtorch_cpu.so", "_ZN2at6native5emptyE"),
                     ("libc.so.6", "memcpy"), ("libgomp.so.1", "GOMP_parallel"),
                     ("libmy_kernel.so", "sgemm_tile"), ("libpython3.12.so", "PyEval")):
        assert not pc_sample.is_math(lib, sym), (lib, sym)


def test_library_gemm_is_seen_and_rejected(sampler, one_thread):
    a, b = torch.rand(384, 384), torch.rand(384, 384)
    s = sampler.sample(lambda: torch.mm(a, b))
    assert s.calls > 0 and sum(s.math.values()) >= pc_sample.MIN_SAMPLES, s.record()
    kinds = [k for k, _ in pc_sample.findings(s)]
    assert kinds == ["library_code"]
    assert "mkl" in pc_sample.findings(s)[0][1].lower() or "gemm" in pc_sample.findings(s)[0][1]


def test_own_code_is_not_math(sampler):
    def own() -> int:
        return sum(i * i for i in range(30000))

    s = sampler.sample(own)
    assert sum(s.where.values()) > 10 and not s.math, s.record()
    assert pc_sample.findings(s) == []
    assert not pc_sample.recording()


def test_replaced_handler_is_tampering(sampler):
    old = signal.signal(signal.SIGPROF, lambda *a: None)
    try:
        s = sampler.sample(lambda: None)
        assert [k for k, _ in pc_sample.findings(s)] == ["evaluator_tampering"]
    finally:
        signal.signal(signal.SIGPROF, old)
        assert pc_sample._Sampler.lib.ks_pc_install() == 0


def test_missing_samples_are_tampering(sampler):
    # Where the thread that computes blocks SIGPROF, the process-directed signal goes to
    # another thread that does not (torch's idle pool on a GPU host): only a process whose
    # every thread blocks it loses samples. The rule itself, on the counts:
    few = pc_sample.Samples(signals=3, cpu_s=100 / pc_sample._Sampler.rate, calls=4)
    assert [k for k, _ in pc_sample.findings(few)] == ["evaluator_tampering"]
    enough = pc_sample.Samples(signals=80, cpu_s=100 / pc_sample._Sampler.rate, calls=4)
    assert pc_sample.findings(enough) == []
    short = pc_sample.Samples(signals=0, cpu_s=5 / pc_sample._Sampler.rate, calls=4)
    assert pc_sample.findings(short) == []  # too little CPU time to judge
