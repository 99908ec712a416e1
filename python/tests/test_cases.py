"""Problems with several input cases (get_input_cases): every case checked, timed, combined."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from conftest import CASES, SOFTMAX, kinds, run_eval
from kernelsmith_worker.cases import combine, weighted_geomean

PROBLEM = CASES / "problem_softmax_cases.py"
SPEEDUP_BY_COLS = {64: 2.0, 128: 0.5}  # what the fake timing reports per case


def fake_time_pair(calls: list[int]):
    """Reports a speedup that depends on the timed case (its row length)."""

    def time_pair(ref_fn: Any, cand_fn: Any, *, device: torch.device, seed: int, inputs: Any,
                  check: Any = None, reference_kernels: Any = None) -> dict[str, Any]:
        inputs.use(1)
        ref_out, cand_out = ref_fn(0), cand_fn(0)
        assert torch.allclose(ref_out, cand_out, atol=1e-4)
        cols = int(ref_out.shape[1])
        calls.append(cols)
        s = SPEEDUP_BY_COLS[cols]
        return {"ok": True, "method": "cpu_wall", "calls_per_sample": 1, "samples": 3,
                "ref_us": 10.0 * s, "cand_us": 10.0, "cand_cv": 0.01 * s, "speedup": s,
                "speedup_ci95": [s * 0.9, s * 1.1], "findings": []}

    return time_pair


def test_honest_candidate_is_checked_on_every_case(worker_ctx):
    result, _, events = run_eval(worker_ctx, CASES / "cpu_honest.py", problem=PROBLEM, trials=2)
    assert result["status"] == "ok", result["message"]
    assert [c["name"] for c in result["cases"]] == ["narrow", "wide"]
    assert [c["weight"] for c in result["cases"]] == [3.0, 1.0]
    for case in result["cases"]:
        assert case["status"] == "ok"
        corr = case["stages"]["correctness"]
        assert corr["trials"] == 2 and corr["passed"] == 2
        assert set(corr["stress"].values()) == {"ok"}, corr["stress"]  # stress trials per case
        assert case["stages"]["audit"]["ok"]
    assert events.log.count("stage:correctness") == 2 and events.log.count("stage:audit") == 2


def test_candidate_hard_coding_one_case_fails_the_other(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_fixed_cols.py", problem=PROBLEM, trials=2)
    assert result["status"] == "incorrect"
    assert result["message"].startswith("case wide: ")
    by_name = {c["name"]: c for c in result["cases"]}
    assert by_name["narrow"]["status"] == "ok"
    assert by_name["wide"]["status"] == "incorrect"
    # the top-level stages are those of the case that decided the status
    assert result["stages"]["correctness"] == by_name["wide"]["stages"]["correctness"]
    assert result["speedup"] is None


def test_reject_finding_names_its_case(worker_ctx):
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_torch_softmax.py", problem=PROBLEM)
    assert result["status"] == "hacked"
    assert "torch_compute" in kinds(result, "reject")
    details = [f["detail"] for f in result["findings"] if f["kind"] == "torch_compute"]
    assert any(d.startswith("case narrow: ") for d in details)
    assert {c["status"] for c in result["cases"]} == {"hacked"}


def test_speedup_is_the_weighted_geometric_mean(worker_ctx, monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(worker_ctx, "time_pair", fake_time_pair(calls))
    result, _, events = run_eval(worker_ctx, CASES / "cpu_honest.py", problem=PROBLEM,
                                 trials=2, timing=True)
    assert result["status"] == "ok", result["message"]
    assert calls == [64, 128]  # each case timed once, after every case was checked
    assert events.log.index("lease:acquire") > events.log.index("stage:audit") > \
        events.log.index("stage:correctness")
    assert events.log.count("lease:acquire") == 2
    # weights 3 (2.0x) and 1 (0.5x): exp((3 ln 2 + ln 0.5) / 4) = sqrt(2)
    assert result["speedup"] == pytest.approx(math.sqrt(2))
    assert [c["speedup"] for c in result["cases"]] == [2.0, 0.5]
    assert result["ref_us"] == pytest.approx((3 * 20.0 + 5.0) / 4)
    assert result["cv"] == pytest.approx(0.02)
    lo, hi = result["speedup_ci95"]
    assert lo < math.sqrt(2) < hi
    assert result["stages"]["timing"]["combined"] == "weighted_geomean"
    assert result["roofline"] is None
    assert all(c["roofline"]["work"] for c in result["cases"])


def test_a_case_rejected_while_timed_decides_the_status(worker_ctx, monkeypatch):
    # The first case's timing finds a reject: the evaluation is hacked with that case's
    # finding (no workload figure is combined, and it is not an infrastructure error).
    calls: list[int] = []
    honest = fake_time_pair(calls)

    def time_pair(*args: Any, **kw: Any) -> dict[str, Any]:
        rec = honest(*args, **kw)
        if len(calls) == 1:
            rec.update(speedup=None, findings=[{"kind": "timing_output_mismatch", "severity":
                                                "reject", "detail": "stale result"}])
        return rec
    monkeypatch.setattr(worker_ctx, "time_pair", time_pair)
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py", problem=PROBLEM, trials=2,
                            timing=True)
    assert result["status"] == "hacked", result["message"]
    assert "timing_output_mismatch" in kinds(result, "reject")
    assert calls == [64]  # the next case is not timed
    assert result["speedup"] is None


def test_weights_move_the_geomean_and_fixed_inputs_work(worker_ctx, monkeypatch, tmp_path):
    # weights swapped (narrow 1, wide 3); narrow's inputs a fixed list, copied for each trial
    problem = tmp_path / "p.py"
    problem.write_text(PROBLEM.read_text()
                       .replace('"inputs": lambda: [torch.randn(8, 64) * 4.0], "weight": 3',
                                '"inputs": [torch.randn(8, 64) * 4.0], "weight": 1')
                       .replace('* 4.0], "weight": 1},\n    ]', '* 4.0], "weight": 3},\n    ]'))
    monkeypatch.setattr(worker_ctx, "time_pair", fake_time_pair([]))
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py", problem=problem, trials=2,
                            timing=True)
    assert result["status"] == "ok", result["message"]
    assert [c["weight"] for c in result["cases"]] == [1.0, 3.0]
    assert result["speedup"] == pytest.approx(1 / math.sqrt(2))
    assert result["cases"][0]["stages"]["correctness"]["passed"] == 2


@pytest.mark.parametrize("body, says", [
    ("return []", "non-empty list"),
    ("return [{'name': 'a', 'inputs': lambda: [torch.randn(2, 64)]}] * 2", "unique"),
    ("return [{'name': 'a', 'inputs': lambda: [torch.randn(2, 64)], 'weight': 0}]",
     "positive number"),
    ("return [{'name': 'a', 'inputs': 3}]", "`inputs` must be a function"),
    ("return [{'name': 'a', 'inputs': [], 'wieght': 2}]", "unknown keys ['wieght']"),
    ("raise RuntimeError('no shapes')", "get_input_cases() raised RuntimeError: no shapes"),
])
def test_bad_cases_are_infra_errors_that_say_what_to_fix(worker_ctx, tmp_path, body, says):
    problem = tmp_path / "p.py"
    problem.write_text(PROBLEM.read_text().split("def get_input_cases():")[0] +
                       f"def get_input_cases():\n    {body}\n\n\n"
                       "def get_inputs():\n    return [torch.randn(8, 64)]\n\n\n"
                       "def get_init_inputs():\n    return []\n")
    result, _, _ = run_eval(worker_ctx, CASES / "cpu_honest.py", problem=problem)
    assert result["status"] == "infra_error"
    assert says in result["message"], result["message"]
    assert "get_input_cases()" in result["message"]


def test_combine_without_every_interval_has_none():
    t = [{"speedup": 2.0, "speedup_ci95": [1.9, 2.1], "ref_us": 2.0, "cand_us": 1.0},
         {"speedup": 1.0, "speedup_ci95": None, "ref_us": 1.0, "cand_us": 1.0}]
    out = combine(t, [1.0, 1.0])
    assert out["speedup"] == pytest.approx(math.sqrt(2))
    assert out["speedup_ci95"] is None
    assert weighted_geomean([4.0, 1.0], [1.0, 1.0]) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        combine([{"speedup": None}], [1.0])


def test_triton_reference_with_the_same_kernel_seeded_is_ok(worker_ctx):
    # A production kernel as the reference, ModelNew seeded with the same (same-named) kernel:
    # only ModelNew is audited, and its kernel counts as its own.
    result, _, _ = run_eval(worker_ctx, SOFTMAX / "triton_candidate.py",
                            problem=CASES / "problem_triton_reference.py", backend="triton",
                            trials=2)
    assert result["status"] == "ok", result["message"]
    assert [c["status"] for c in result["cases"]] == ["ok", "ok"]
    assert result["stages"]["audit"]["custom_kernels"] == ["softmax_kernel"]
    assert not kinds(result, "reject") and not kinds(result, "warn"), result["findings"]
