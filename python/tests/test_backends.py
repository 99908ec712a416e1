"""Backend helpers that do not need a GPU: kernel-name discovery and the load_inline hook."""

from __future__ import annotations

import pytest

from conftest import CASES, SOFTMAX, run_eval
from kernelsmith_worker.backends import available, registry
from kernelsmith_worker.backends.cuda import _wrap_load_inline, global_kernel_names
from kernelsmith_worker.gpu_profile import ExactNames, kernel_matches
from kernelsmith_worker.launches import LaunchRecorder, install


def test_global_kernel_names():
    src = '''
    __global__ void softmax_kernel(const float* x) {}
    template <int B> __global__ void __launch_bounds__(256) tiled(float* x) {}
    extern "C" __global__ static void k3 (int a) {}
    __global__ void
        multi_line(
    '''
    assert global_kernel_names(src) == {"softmax_kernel", "tiled", "k3", "multi_line"}
    example = (SOFTMAX / "cuda_candidate.py").read_text()
    assert global_kernel_names(example) == {"softmax_rows_kernel"}


def test_triton_kernel_names_are_the_launched_ones_matched_whole():
    # names in the source text (a string, a jit function never launched) claim nothing, and a
    # device record is a Triton kernel only by its whole name: torch's LayerNorm kernel is not
    # the candidate's vectorized_layer_norm_kernel
    rec = LaunchRecorder()
    with rec.launch("vectorized_layer_norm_kernel"):
        pass
    src = '"""@triton.jit\ndef reduce_kernel(x): pass"""\n@triton.jit\ndef unused(x): pass\n'
    names = registry()["triton"].kernel_names(src, rec)
    assert names == {"vectorized_layer_norm_kernel"} and isinstance(names, ExactNames)
    torch_kernel = ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel"
                    "<float, float, false>(int, float, float const*)")
    assert kernel_matches(torch_kernel.replace("at::native::", "ns::"), names) is None
    assert kernel_matches("vectorized_layer_norm_kernel", names) == "vectorized_layer_norm_kernel"
    assert kernel_matches("vectorized_layer_norm_kernel(float*)", names) == \
        "vectorized_layer_norm_kernel"
    assert kernel_matches("reduce_kernel", names) is None


def test_kernel_matches():
    names = {"softmax_rows_kernel", "tiled"}
    demangled = "softmax_rows_kernel(float const*, float*, int)"
    assert kernel_matches(demangled, names) == "softmax_rows_kernel"
    assert kernel_matches("void ns::tiled<128>(float*)", names) == "tiled"
    assert kernel_matches("softmax_kernel", {"softmax_kernel"}) == "softmax_kernel"
    assert kernel_matches("my_softmax_rows_kernel_v2(float*)", names) is None
    assert kernel_matches("void at::native::tiled<float>(float*)", names) is None  # torch's own


def test_load_inline_hook_hashes_the_name_and_keeps_sources(worker_ctx):
    seen = []

    def fake_load_inline(name, cpp_sources, cuda_sources=None, *args, **kwargs):
        seen.append(name)
        return name

    hooked = _wrap_load_inline(fake_load_inline)
    rec = LaunchRecorder()
    install(rec)
    try:
        a = hooked("ext", "int f();", "__global__ void k1() {}", functions=["f"])
        b = hooked(name="ext", cpp_sources="int f();", cuda_sources="__global__ void k1() {}",
                   functions=["f"])
        c = hooked("ext", "int f();", "__global__ void k2() {}", functions=["f"])
    finally:
        install(worker_ctx.recorder)
    assert a == b and a.startswith("ext_") and a != c
    assert any("k2" in s for s in rec.inline_sources)


def test_backend_availability_on_this_machine():
    backends = registry()
    names = available(backends)
    assert "cpu" in names and "triton" in names  # TRITON_INTERPRET=1 (conftest)
    assert str(backends["triton"].device()) == "cpu"  # the interpreter runs on the CPU


def test_unavailable_backend_is_infra_error(worker_ctx):
    reason = worker_ctx.backends["cuda"].unavailable_reason()
    if reason is None:
        pytest.skip("a GPU is visible: the cuda backend is available")
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py", backend="cuda")
    assert result["status"] == "infra_error" and reason in result["message"]
