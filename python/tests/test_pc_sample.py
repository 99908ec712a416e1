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


def test_blocked_signal_is_missing_samples(sampler):
    def busy_blocked() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF})
        try:
            sum(i * i for i in range(600000))  # ~10 ticks blocked: one signal comes
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGPROF})

    s = sampler.sample(busy_blocked)
    assert s.cpu_s * pc_sample._Sampler.rate >= pc_sample.MIN_EXPECTED, s.record()
    assert "evaluator_tampering" in [k for k, _ in pc_sample.findings(s)], s.record()
