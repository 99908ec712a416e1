"""The triton backend under TRITON_INTERPRET=1 (set by conftest): launches are hooked."""

from __future__ import annotations

from conftest import CASES, SOFTMAX, kinds, run_eval


def test_honest_triton_example_is_ok(worker_ctx):
    result, poisoned, _ = run_eval(worker_ctx, SOFTMAX / "triton_candidate.py",
                                   problem=SOFTMAX / "problem.py", backend="triton", trials=2)
    assert result["status"] == "ok", result["message"]
    audit = result["stages"]["audit"]
    assert audit["custom_kernels"] == ["softmax_kernel"]
    assert audit["custom_launches"] == 1
    assert audit["custom_device_share"] is None  # not measurable under the interpreter
    assert audit["torch_ops"] == {"aten.empty_like": 1}
    assert not poisoned


def test_triton_decoy_returning_torch_result_is_hacked(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "triton_decoy.py", backend="triton")
    assert result["status"] == "hacked"
    assert "torch_compute" in kinds(result, "reject")
    assert result["stages"]["audit"]["custom_kernels"] == ["copy_kernel"]


def test_runtime_bound_loops_run_in_the_interpreter(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "triton_runtime_loop.py", backend="triton",
                            trials=2)
    assert result["status"] == "ok", result["message"]
