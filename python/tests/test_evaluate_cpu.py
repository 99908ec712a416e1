"""End-to-end evaluations (in-process) on the cpu backend: honest, broken and hacked candidates."""

from __future__ import annotations

import collections
import json
import time

import torch

from conftest import CASES, SOFTMAX, kinds, run_eval
from kernelsmith_worker.protocol import to_json_safe
from kernelsmith_worker.stress import KINDS as STRESS_KINDS

RESULT_KEYS = {"status", "message", "backend", "speedup", "speedup_ci95", "ref_us", "cand_us",
               "cv", "vs_baseline", "findings", "stages", "device", "roofline", "gpu_seconds"}


def test_softmax_example_cpu_candidate_is_ok(worker_ctx):
    result, poisoned, events = run_eval(worker_ctx, SOFTMAX / "cpu_candidate.py",
                                        problem=SOFTMAX / "problem.py")
    assert result["status"] == "ok", result["message"]
    assert set(result) == RESULT_KEYS
    assert not poisoned
    assert events.log == ["stage:load", "stage:correctness", "stage:audit"]
    load = result["stages"]["load"]["phases_s"]  # no timing: no fresh draws, no roofline
    assert list(load) == ["reference_model", "trials", "value_domain", "stress",
                         "poison_free_blocks", "import", "construct"]
    assert all(v >= 0 for v in load.values())
    assert sum(load.values()) <= result["stages"]["load"]["duration_s"] + 1e-3
    corr = result["stages"]["correctness"]
    assert corr["passed"] == corr["trials"] == 5 and corr["first_mismatch"] is None
    audit = result["stages"]["audit"]
    assert audit["custom_launches"] >= 1
    assert audit["custom_kernels"] == ["softmax_rows.softmax_rows"]
    assert audit["torch_ops"] == {"aten.empty_like": 1}
    assert 0.0 < audit["custom_device_share"] <= 1.0
    assert result["device"]["kind"] == "cpu" and result["device"]["torch"]
    assert result["gpu_seconds"] == 0.0  # no GPU work on the cpu backend
    json.dumps(to_json_safe(result), allow_nan=False)  # what goes on the wire


def test_gpu_seconds_sum_the_stages_of_an_evaluation_on_a_gpu():
    from kernelsmith_worker.eval_result import gpu_seconds

    stages = {"load": {"duration_s": 0.5}, "correctness": {"duration_s": 0.25},
              "audit": {"duration_s": 0.125}, "timing": {"duration_s": 1.0}}
    assert gpu_seconds(torch.device("cuda"), stages) == 1.875
    stages["timing"] = {"ok": False}  # a stage cut short before its duration was written
    assert gpu_seconds(torch.device("cuda"), stages) == 0.875
    assert gpu_seconds(torch.device("cpu"), stages) == 0.0


def test_a_candidate_no_stress_trial_checked_gets_a_finding(worker_ctx):
    result, _, _ = run_eval(worker_ctx, SOFTMAX / "cpu_candidate.py",
                            problem=CASES / "problem_softmax_refuses_stress.py")
    assert result["status"] == "ok", result["message"]
    assert result["stages"]["correctness"]["stress_skipped"] == len(STRESS_KINDS)
    assert "not_stress_checked" in kinds(result, "warn")
    checked, _, _ = run_eval(worker_ctx, SOFTMAX / "cpu_candidate.py",
                             problem=CASES / "problem_softmax_small.py")
    assert checked["stages"]["correctness"]["stress_skipped"] == 0
    assert "not_stress_checked" not in kinds(checked)


def test_parameters_match_reference_seed(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_linear.py",
                            problem=CASES / "problem_linear.py")
    assert result["status"] == "ok", result["message"]


def test_torch_softmax_in_forward_is_hacked(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_torch_softmax.py")
    assert result["status"] == "hacked"
    assert {"torch_compute", "no_custom_kernel"} <= kinds(result, "reject")
    assert "aten._softmax x1" in result["message"]
    assert result["stages"]["audit"]["torch_ops"]["aten._softmax"] == 1


def test_decoy_kernel_with_torch_result_is_hacked(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_decoy.py")
    assert result["status"] == "hacked"
    assert "torch_compute" in kinds(result, "reject")
    assert "no_custom_kernel" not in kinds(result)
    assert "alongside its custom kernels" in result["message"]


def test_light_torch_op_next_to_kernel_is_a_warning(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_light_ops.py")
    assert result["status"] == "ok", result["message"]
    assert "torch_compute_light" in kinds(result, "warn")


def test_output_cached_by_data_ptr_is_rejected(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_cached_dataptr.py")
    # Either a later trial reuses the address (stale output → incorrect) or the in-place
    # overwrite check of the audit catches it.
    assert result["status"] in ("incorrect", "hacked")
    if result["status"] == "hacked":
        assert "cached_output" in kinds(result, "reject")


def test_output_cached_per_tensor_object_never_serves_a_stale_output(worker_ctx):
    # every call is handed new objects (inputs.present), the audit's call on overwritten
    # values too: a cache on the object never hits, the candidate computes every time
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_cached_object.py")
    assert result["stages"]["correctness"]["ok"]
    assert result["status"] == "ok", result["message"]
    assert "cached_output" not in kinds(result)


def test_candidate_mutating_its_input_is_incorrect(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_mutates_input.py")
    assert result["status"] == "incorrect"
    assert "candidate modified its input #0" in result["message"]
    assert result["stages"]["correctness"]["failed_check"] == "inputs_unmodified"


def test_output_that_is_its_input_is_incorrect_unless_the_reference_aliases_too(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_relu_alias.py",
                            problem=CASES / "problem_relu_nonneg.py")
    assert result["status"] == "incorrect"
    assert result["stages"]["correctness"]["failed_check"] == "output_aliases_input"
    assert "shares memory with input #0" in result["message"]
    view, _, _ = run_eval(worker_ctx, CASES / "cpu_flatten_view.py",
                          problem=CASES / "problem_flatten_view.py")
    assert view["stages"]["correctness"]["ok"], view["message"]


def test_tensor_subclass_output_is_incorrect(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_subclass.py")
    assert result["status"] == "incorrect"
    assert "subclass" in result["message"] and "Sneaky" in result["message"]


def test_constant_output_is_hacked(worker_ctx):
    # 1.0005 is within the default tolerance of every output of 1 + 1e-3 * x: correctness
    # passes, the output-varies check does not.
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_constant.py",
                            problem=CASES / "problem_near_one.py")
    assert result["stages"]["correctness"]["ok"]
    assert result["status"] == "hacked"
    assert "constant_output" in kinds(result, "reject")


def test_wrong_shape_is_incorrect(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_wrong_shape.py")
    assert result["status"] == "incorrect"
    assert "output shape [32, 63] differs from the reference shape [32, 64]" in result["message"]


def test_value_mismatch_reports_first_index(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_wrong_values.py")
    assert result["status"] == "incorrect"
    corr = result["stages"]["correctness"]
    assert corr["passed"] == 0 and corr["failed_check"] == "values"
    mismatch = corr["first_mismatch"]
    assert mismatch["trial"] == 0 and len(mismatch["index"]) == 2
    assert isinstance(mismatch["expected"], float) and isinstance(mismatch["actual"], float)
    assert abs(mismatch["expected"] - mismatch["actual"]) > 0.01
    assert corr["max_abs_err"] > 0.01
    assert result["message"].startswith("trial 0: output mismatch at index ")


def test_strict_tolerance_is_applied(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py", tolerance="strict")
    assert result["status"] == "ok", result["message"]
    assert result["stages"]["correctness"]["atol"] == 1e-4
    # the precision the timed checks hold it to: an honest fp32 kernel is close to exact
    assert 0 <= result["stages"]["correctness"]["max_normwise_rel_err"] < 1e-5


def test_syntax_error_is_compile_error(worker_ctx):
    result, _, events = run_eval(worker_ctx, CASES / "cpu_syntax_error.py")
    assert result["status"] == "compile_error"
    assert "SyntaxError" in result["message"]
    assert "SyntaxError" in result["stages"]["load"]["log_tail"]
    assert events.log == ["stage:load"]


def test_cpp_that_does_not_compile_is_compile_error(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_bad_cpp.py")
    assert result["status"] == "compile_error"
    assert "does not compile" in result["message"]
    assert "error" in result["stages"]["load"]["log_tail"]


def test_missing_modelnew_is_compile_error(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_no_modelnew.py")
    assert result["status"] == "compile_error"
    assert "ModelNew" in result["message"]


def test_exception_in_forward_is_runtime_error(worker_ctx):
    result, poisoned, _ = run_eval(worker_ctx, CASES / "cpu_raises.py")
    assert result["status"] == "runtime_error"
    assert "ValueError: boom in forward" in result["message"]
    assert "boom in forward" in result["stages"]["correctness"]["error"]
    assert not poisoned


def test_sys_exit_in_forward_is_runtime_error(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_sys_exit.py")
    assert result["status"] == "runtime_error"
    assert "SystemExit" in result["message"]


def test_problem_missing_get_inputs_is_infra_error(worker_ctx):
    problem = CASES / "problem_missing_inputs.py"
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py", problem=problem)
    assert result["status"] == "infra_error"
    assert "get_inputs" in result["message"] and str(problem) in result["message"]
    assert result["stages"]["load"]["error"] == result["message"]


def test_unknown_backend_is_infra_error(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py", backend="vulkan")
    assert result["status"] == "infra_error"
    assert "vulkan" in result["message"]


def test_timer_patched_at_import_is_hacked_and_restored(worker_ctx):
    original = time.perf_counter
    result, poisoned, _ = run_eval(worker_ctx, CASES / "cpu_tamper_timer.py")
    assert result["status"] == "hacked"
    assert "evaluator_tampering" in kinds(result, "reject")
    assert "time.perf_counter" in result["message"]
    assert poisoned  # the engine replaces the worker
    assert time.perf_counter is original


def test_allclose_patched_at_import_is_hacked(worker_ctx):
    original = torch.allclose
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_tamper_allclose.py")
    assert result["status"] == "hacked"
    assert "torch.allclose" in result["message"]
    assert torch.allclose is original


def test_patching_the_worker_itself_is_hacked(worker_ctx):
    from kernelsmith_worker import correctness

    original = correctness.compare_outputs
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_tamper_worker.py")
    assert result["status"] == "hacked"
    assert "kernelsmith_worker.correctness.compare_outputs" in result["message"]
    assert correctness.compare_outputs is original


def test_changing_torch_settings_in_forward_is_hacked(worker_ctx):
    threads = torch.get_num_threads()
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_tamper_in_forward.py")
    assert result["status"] == "hacked"
    assert "torch.get_num_threads()" in result["message"]
    assert torch.get_num_threads() == threads


def test_thread_left_running_is_hacked(worker_ctx):
    result, poisoned, _ = run_eval(worker_ctx, CASES / "cpu_thread.py")
    assert result["status"] == "hacked"
    assert "background_thread" in kinds(result, "reject")
    assert "ks-test-lingering" in result["message"]
    assert poisoned


def test_replacing_a_torch_function_the_reference_uses_is_hacked(worker_ctx):
    original = torch.softmax
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_tamper_reference.py")
    assert result["status"] == "hacked"
    assert "torch.softmax was replaced" in result["message"]
    assert torch.softmax is original


def test_inputs_and_references_are_cached_across_requests(worker_ctx):
    import hashlib

    problem = CASES / "problem_softmax_small.py"
    sha = hashlib.sha256(problem.read_text().encode()).hexdigest()
    run_eval(worker_ctx, CASES / "cpu_honest.py", seed=1234)
    entries = [worker_ctx.cache.get((sha, 1234, t, "cpu")) for t in range(5)]
    assert all(e is not None and e.has_reference for e in entries)
    ref0 = entries[0].reference
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py", seed=1234)
    assert result["status"] == "ok"
    assert worker_ctx.cache.get((sha, 1234, 0, "cpu")).reference is ref0  # reused, not recomputed


def test_partial_output_within_unscaled_atol_is_incorrect(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_partial_rows.py",
                            problem=CASES / "problem_softmax_wide.py", trials=2)
    assert result["status"] == "incorrect", result["message"]
    assert "atol scaled" in result["message"]
    assert result["stages"]["correctness"]["first_mismatch"]["index"][0] == 1


def test_every_call_hands_the_candidate_objects_that_look_the_same(worker_ctx, monkeypatch):
    import sys

    from kernelsmith_worker import timing

    seen: list = []
    monkeypatch.setattr(sys, "_ks_test_input_objects", seen, raising=False)
    monkeypatch.setattr(worker_ctx, "time_pair", lambda *a, **kw: timing.time_pair(
        *a, config=timing.TimingConfig(sample_budget_s=0.05, sample_max_s=0.1, min_samples=8,
                                       n_boot=100), **kw))
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_records_input_objects.py", timing=True)
    assert result["status"] == "ok", result["message"]
    timed = result["stages"]["timing"]
    assert timed["samples_cand"] >= 8 and timed["timed_checks"] >= 2
    looks = {look for look, _ in seen}
    # trials, stress, audit, timed calls, their checks and the call after the timing loop
    assert len(seen) > 30 and len(looks) == 1, collections.Counter(look for look, _ in seen)
