"""The timing stage: lease around it, results copied, failures mapped (stand-in time_pair)."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import pytest
import torch

from conftest import CASES, kinds, run_eval


def fake_time_pair(findings: list[dict[str, str]] | None = None, fail: bool = False):
    calls: list[dict[str, Any]] = []

    def time_pair(ref_fn: Callable[[int], object], cand_fn: Callable[[int], object], *,
                  device: torch.device, seed: int, inputs: Any,
                  check: Any = None, reference_kernels: Any = None) -> dict[str, Any]:
        inputs.use(1)
        ref_out, cand_out = ref_fn(0), cand_fn(0)
        calls.append({"device": device, "seed": seed,
                      "grad": ref_out.requires_grad or cand_out.requires_grad,
                      "close": bool(torch.allclose(ref_out, cand_out, atol=1e-4))})
        if fail:
            raise RuntimeError("timing exploded")
        return {"ok": True, "method": "cpu_wall", "calls_per_sample": 1, "samples": 3,
                "kept_ref": 3, "kept_cand": 3, "ref_us": 10.0, "cand_us": 5.0, "ref_cv": 0.01,
                "cand_cv": 0.02, "speedup": 2.0, "speedup_ci95": [1.9, 2.1], "ref_eager_us": 10.0,
                "l2_flush": False, "warmup_s": 0.0, "wall_check": None, "fallback_reason": None,
                "duration_s": 0.01, "findings": list(findings or [])}

    return time_pair, calls


def test_timing_runs_under_the_lease_and_fills_the_result(worker_ctx, monkeypatch):
    time_pair, calls = fake_time_pair()
    monkeypatch.setattr(worker_ctx, "time_pair", time_pair)
    # A problem with parameters: outputs would require grad unless forward runs under no_grad.
    result, _, events = run_eval(worker_ctx, CASES / "cpu_linear.py",
                                 problem=CASES / "problem_linear.py", timing=True, seed=7)
    assert result["status"] == "ok", result["message"]
    assert events.log == ["stage:load", "stage:correctness", "stage:audit", "lease:acquire",
                          "stage:timing", "lease:release"]
    assert calls == [{"device": torch.device("cpu"), "seed": 7, "grad": False, "close": True}]
    assert result["speedup"] == 2.0 and result["speedup_ci95"] == [1.9, 2.1]
    assert result["ref_us"] == 10.0 and result["cand_us"] == 5.0 and result["cv"] == 0.02
    assert result["stages"]["timing"]["method"] == "cpu_wall"


def test_timing_failure_is_runtime_error_and_releases_the_lease(worker_ctx, monkeypatch):
    time_pair, _ = fake_time_pair(fail=True)
    monkeypatch.setattr(worker_ctx, "time_pair", time_pair)
    result, _, events = run_eval(worker_ctx, CASES / "cpu_honest.py", timing=True)
    assert result["status"] == "runtime_error"
    assert "timing exploded" in result["message"]
    assert events.log[-2:] == ["stage:timing", "lease:release"]
    assert result["speedup"] is None and result["stages"]["timing"]["ok"] is False


def test_timing_record_not_ok_is_runtime_error(worker_ctx, monkeypatch):
    def time_pair(ref_fn, cand_fn, *, device, seed, inputs, check=None,
                  reference_kernels=None):
        return {"ok": False, "method": None, "error": "RuntimeError: CUDA error: an illegal "
                "memory access was encountered", "findings": []}

    monkeypatch.setattr(worker_ctx, "time_pair", time_pair)
    result, poisoned, events = run_eval(worker_ctx, CASES / "cpu_honest.py", timing=True)
    assert result["status"] == "runtime_error" and "illegal memory access" in result["message"]
    assert poisoned
    assert events.log[-1] == "lease:release"


def test_reject_finding_from_timing_makes_it_hacked(worker_ctx, monkeypatch):
    found = [{"kind": "wall_mismatch", "detail": "wall time 10x event time", "severity": "reject"}]
    time_pair, _ = fake_time_pair(findings=found)
    monkeypatch.setattr(worker_ctx, "time_pair", time_pair)
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py", timing=True)
    assert result["status"] == "hacked" and "wall_mismatch" in kinds(result, "reject")
    assert result["speedup"] is None


@pytest.mark.parametrize("candidate", ["cpu_wrong_values.py", "cpu_torch_softmax.py"])
def test_failed_candidates_are_not_timed(worker_ctx, monkeypatch, candidate):
    time_pair, calls = fake_time_pair()
    monkeypatch.setattr(worker_ctx, "time_pair", time_pair)
    result, _, events = run_eval(worker_ctx, CASES / candidate, timing=True)
    assert result["status"] != "ok"
    assert calls == [] and "lease:acquire" not in events.log


def test_unavailable_timing_is_infra_error(worker_ctx):
    result, _, events = run_eval(worker_ctx, CASES / "cpu_honest.py", timing=True)  # time_pair None
    assert result["status"] == "infra_error" and "cannot time" in result["message"]
    assert "lease:acquire" not in events.log


def _with_baseline(candidate: Any, baseline: Any) -> dict[str, Any]:
    return {"baseline_path": str(baseline), "baseline_source": baseline.read_text()}


def test_a_baseline_is_timed_in_the_reference_place(worker_ctx, monkeypatch):
    timed: list[tuple[Any, Any]] = []
    time_pair, _ = fake_time_pair()

    def recording(ref_fn, cand_fn, **kw):
        kw["inputs"].use(1)
        timed.append((ref_fn(0), cand_fn(0)))
        return time_pair(ref_fn, cand_fn, **kw)

    monkeypatch.setattr(worker_ctx, "time_pair", recording)
    baseline = CASES / "cpu_linear.py"
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_linear.py",
                            problem=CASES / "problem_linear.py",
                            timing=True, **_with_baseline(None, baseline))
    assert result["status"] == "ok", result["message"]
    # Timed against the baseline: vs_baseline holds the figures, nothing is vs the reference.
    assert result["vs_baseline"] == {"path": str(baseline), "speedup": 2.0,
                                     "speedup_ci95": [1.9, 2.1], "baseline_us": 10.0,
                                     "cand_us": 5.0}
    assert result["speedup"] is None and result["ref_us"] is None
    # The baseline's ModelNew ran in the reference's place, built with the same seed.
    base_out, cand_out = timed[0]
    assert torch.equal(base_out, cand_out)
    assert result["stages"]["correctness"]["passed"] == 5  # correctness is still vs Model


def test_a_baseline_that_does_not_load_is_an_infra_error(worker_ctx, monkeypatch, tmp_path):
    time_pair, calls = fake_time_pair()
    monkeypatch.setattr(worker_ctx, "time_pair", time_pair)
    broken = tmp_path / "best.py"
    broken.write_text("def oops(:\n")
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_linear.py",
                            problem=CASES / "problem_linear.py",
                            timing=True, **_with_baseline(None, broken))
    assert result["status"] == "infra_error"
    assert f"baseline {broken}" in result["message"]
    assert result["vs_baseline"] is None and not calls


def test_a_patch_live_at_a_check_inside_timing_is_tampering(worker_ctx, monkeypatch):
    # what a candidate does between its calls while it is timed: torch.softmax slowed for the
    # reference; time_pair's checks run where no candidate code does
    def time_pair(ref_fn, cand_fn, *, device, seed, inputs, check=None,
                  reference_kernels=None):
        inputs.use(1)
        cand_fn(0)
        real = torch.softmax
        torch.softmax = lambda *a, **k: real(*a, **k)
        check("before a reference sample")
        raise AssertionError("the check did not stop the evaluation")

    original = torch.softmax
    monkeypatch.setattr(worker_ctx, "time_pair", time_pair)
    result, _, events = run_eval(worker_ctx, CASES / "cpu_honest.py", timing=True)
    assert result["status"] == "hacked", result["message"]
    assert "before a reference sample" in result["message"]
    assert "torch.softmax" in result["message"]
    assert torch.softmax is original  # put back
    assert events.log[-1] == "lease:release"
