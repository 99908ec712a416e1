"""pc_sample: forward's CPU time attributed by program counter (math-library code rejected)."""

from __future__ import annotations

import signal
import time

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


_SPIN = r"""
#include <pthread.h>
#include <signal.h>
#include <thread>
#include <vector>
static double spin(long n) {
  volatile double s = 0;
  for (long i = 0; i < n; ++i) s = s + 1e-9 * (double)i;
  return s;
}
extern "C" double spin_masked(long n) {  // SIGPROF blocked while it computes
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGPROF);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  double s = spin(n);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return s;
}
extern "C" double spin_threads(long n, int k) {  // honest: k threads share the work
  std::vector<std::thread> ts;
  std::vector<double> out(k);
  for (int t = 0; t < k; ++t) ts.emplace_back([&, t] { out[t] = spin(n / k); });
  for (auto& t : ts) t.join();
  return out[0];
}
"""


@pytest.fixture(scope="module")
def spin_lib():
    import ctypes

    from kernelsmith_worker import cpu_ext

    # built as the evaluator's own helpers are (pthread_sigmask is refused to candidates)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(cpu_ext, "_evaluator_called", lambda: True)
        path, _ = cpu_ext.build("test_pc_spin", _SPIN, openmp=False)
    lib = ctypes.CDLL(str(path))
    lib.spin_masked.argtypes = [ctypes.c_long]
    lib.spin_threads.argtypes = [ctypes.c_long, ctypes.c_int]
    lib.spin_masked.restype = lib.spin_threads.restype = ctypes.c_double
    return lib


def test_thread_blocking_sigprof_is_tampering(sampler, spin_lib):
    # An idle thread that does not block SIGPROF takes the signals the computing thread
    # sheds: the total stays right, the per-thread counts do not.
    import threading

    stop = threading.Event()
    idle = threading.Thread(target=stop.wait)
    idle.start()
    try:
        s = sampler.sample(lambda: spin_lib.spin_masked(20_000_000))
    finally:
        stop.set()
        idle.join()
    kinds = [k for k, d in pc_sample.findings(s)]
    assert kinds == ["evaluator_tampering"], s.record()
    assert "blocks SIGPROF" in pc_sample.findings(s)[0][1]


def test_threads_of_an_honest_kernel_are_not_tampering(sampler, spin_lib):
    s = sampler.sample(lambda: spin_lib.spin_threads(20_000_000, 2))
    assert sum(s.by_thread.values()) > 20 and pc_sample.findings(s) == [], s.record()


def test_samples_taken_for_another_thread_are_tampering(sampler):
    main = 100
    shed = pc_sample.Samples(signals=60, cpu_s=60 / pc_sample._Sampler.rate, calls=2)
    shed.by_thread.update({main: 60})
    shed.thread_cpu_s = {main: 1 / pc_sample._Sampler.rate, 101: 0.0}
    assert "being delivered to it" in pc_sample.findings(shed)[0][1]
    fair = pc_sample.Samples(signals=60, cpu_s=60 / pc_sample._Sampler.rate, calls=2)
    fair.by_thread.update({main: 35, 101: 25})
    fair.thread_cpu_s = {main: 30 / pc_sample._Sampler.rate, 101: 30 / pc_sample._Sampler.rate}
    assert pc_sample.findings(fair) == []


def test_a_request_samples_every_candidate_call_and_only_those(sampler, one_thread):
    a, b = torch.rand(256, 256), torch.rand(256, 256)
    with pc_sample.Request(True) as req:
        assert pc_sample.recording()
        for _ in range(30):
            torch.mm(a, b)  # the reference's library GEMM: not the candidate's
        delay, _ = signal.getitimer(signal.ITIMER_PROF)
        with pc_sample.candidate_call():
            # the timer a candidate can read looks the same inside its calls as outside
            assert (signal.getitimer(signal.ITIMER_PROF)[0] > 0) == (delay > 0) == True
            sum(i * i for i in range(3_000_000))
    assert not pc_sample.recording()
    assert req.samples is not None and sum(req.samples.where.values()) > 5
    assert not req.samples.math, req.samples.record()
    assert req.findings() == []


def test_a_request_finds_library_and_torch_work_in_candidate_calls(sampler, one_thread):
    a, b = torch.rand(256, 256), torch.rand(256, 256)
    with pc_sample.Request(True) as req:
        gemm = pc_sample.tagged_slot(torch.mm, lambda j: [a, b], True)
        c0 = time.process_time()
        while time.process_time() - c0 < 0.3:
            gemm(0)
    assert [k for k, _ in req.findings()] == ["library_code"], req.samples.record()
    x = torch.rand(64, 65536)
    below = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)  # under the dispatcher's watch
    with pc_sample.Request(True) as req:
        c0 = time.process_time()
        while time.process_time() - c0 < 0.3:
            with pc_sample.candidate_call():
                torch.ops.aten.sum.dim_IntList.redispatch(below, x, [1], False)
    assert "torch_compute" in [k for k, _ in req.findings()], req.samples.record()


def test_slot_calls_fetch_their_arguments_untagged():
    seen = []

    def args(j):
        seen.append(("args", pc_sample._Sampler.tag.value))
        return [j]

    def model(j):
        seen.append(("model", pc_sample._Sampler.tag.value))
        return j

    assert pc_sample.tagged_slot(model, args, True)(3) == 3  # no request: nothing tagged
    with pc_sample.Request(True):
        assert pc_sample.tagged_slot(model, args, True)(4) == 4
        assert pc_sample.tagged_slot(model, args, False)(5) == 5
    assert seen == [("args", 0), ("model", 0), ("args", 0), ("model", 1), ("args", 0),
                    ("model", 0)]
    assert pc_sample.Request(False).__enter__().findings() == []


def test_kinds_of_code_by_where_the_library_is():
    import os

    import numpy

    umath = numpy._core._multiarray_umath.__file__ if hasattr(numpy, "_core") \
        else numpy.core._multiarray_umath.__file__
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    assert pc_sample.kind_of(umath, "?") == "foreign"
    assert pc_sample.kind_of("/tmp/libgomp-16c01abc.so", "sgemm_kernel_HASWELL") == "foreign"
    assert pc_sample.kind_of(os.path.join(torch_lib, "libc10.so"), "?") == ""
    assert pc_sample.kind_of(os.path.join(torch_lib, "libtorch_cpu.so"), "?") == "torch"
    assert pc_sample.kind_of(os.path.join(torch_lib, "libtorch_cpu.so"), "mkl_blas_x") == "math"
    assert pc_sample.kind_of("/lib/x86_64-linux-gnu/libc.so.6", "memcpy") == ""
    assert pc_sample.kind_of("", "") == ""


def test_another_packages_compiled_code_in_candidate_calls_is_library_code(sampler):
    import numpy

    x = numpy.random.rand(1 << 20).astype(numpy.float32)
    with pc_sample.Request(True) as req:
        c0 = time.process_time()
        while time.process_time() - c0 < 0.3:
            with pc_sample.candidate_call():
                numpy.exp(x)
    found = req.findings()
    assert [k for k, _ in found] == ["library_code"], req.samples.record()
    assert "neither its own builds" in found[0][1]


def test_code_the_loader_does_not_know_is_judged_by_its_mapping():
    import os

    torch_cpu = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    maps = sorted([(0x1000, 0x2000, ""), (0x3000, 0x4000, "[vdso]"),
                   (0x5000, 0x6000, "/tmp/copy-of-a-blas.bin"),
                   (0x7000, 0x8000, "/lib/x86_64-linux-gnu/libc.so.6"),
                   (0x9000, 0xa000, torch_cpu)])
    # machine code written into anonymous memory: a copied routine, a JIT's kernel
    assert pc_sample.unregistered(0x1800, maps) == ("[anonymous]", "foreign")
    assert pc_sample.unregistered(0x3010, maps) == ("[vdso]", "")
    # a file mapped by hand, not through the loader: judged as that file
    assert pc_sample.unregistered(0x5000, maps) == ("copy-of-a-blas.bin", "foreign")
    assert pc_sample.unregistered(0x7fff, maps) == ("libc.so.6", "")
    assert pc_sample.unregistered(0x9100, maps) == ("libtorch_cpu.so", "torch")
    assert pc_sample.unregistered(0x2800, maps) == ("?", "")  # in no mapping


def test_anonymous_executable_memory_is_found_in_the_process_maps():
    import ctypes
    import mmap

    buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    try:
        addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        assert pc_sample.where(addr + 16, pc_sample.executable_maps)[2] == "foreign"
        assert pc_sample.where(addr + 16)[2] == ""  # without the maps: the loader knows nothing
    finally:
        del addr
        buf.close()
