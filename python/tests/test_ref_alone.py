"""The reference timed alone before the candidate's import (ref_alone.py): the line through its
samples, the comparison with the timing stage's figures, the CPU and (fake, virtual-clock)
CUDA measurements, and the evaluation that rejects a candidate which slows the reference."""

from __future__ import annotations

import math
import sys

import pytest
import torch

from conftest import CASES, kinds, run_eval
from kernelsmith_worker import ref_alone, timing
from kernelsmith_worker.ref_alone import (CONFIRM_RATIO, SLOWED_RATIO, alone_us, compare, confirm,
                                         time_alone)
from test_timing_virtual import SEQ, VirtualDevice, VirtualKernel, virtual_host_clock


def cpu_alone(wall: float, cpu: float) -> dict:
    return {"points": {"cpu_wall": [[1, wall, cpu]]}, "duration_s": 0.1}


def cpu_record(ref_us: float, ref_cpu_us: float, k: int = 1) -> dict:
    return {"ok": True, "method": "cpu_wall", "calls_per_sample": k, "ref_us": ref_us,
            "ref_cpu_us": ref_cpu_us}


# ----------------------------------------------------------------------------- the figures


def test_alone_us_follows_the_line_through_the_samples():
    # a sample of k calls costs 10 us + 2 us a call: 12 us for one call, 210 us for 100
    alone = {"points": {"cuda_graph": [[1, 12.0], [100, 210.0]]}}
    assert alone_us(alone, "cuda_graph", 100) == pytest.approx(2.1)
    assert alone_us(alone, "cuda_graph", 1) == pytest.approx(12.0)
    assert alone_us(alone, "cuda_graph", 5) == pytest.approx(4.0)  # (10 + 2 * 5) / 5
    assert alone_us(alone, "cuda_events", 5) is None  # not measured that way
    # one point: its time a call; a column past the points': not measured
    assert alone_us(cpu_alone(100.0, 90.0), "cpu_wall", 4) == 100.0
    assert alone_us(cpu_alone(100.0, 90.0), "cpu_wall", 4, column=2) == 90.0
    assert alone_us({"points": {"cuda_graph": [[1, 12.0]]}}, "cuda_graph", 1, column=2) is None


def test_compare_reads_the_cpu_time_on_the_cpu():
    alone = cpu_alone(100.0, 100.0)
    fields, slowed = compare(alone, cpu_record(150.0, 148.0))
    assert not slowed and fields["ref_alone_us"] == 100.0
    assert fields["ref_alone_ratio"] == pytest.approx(1.48)
    assert fields["ref_alone"]["compared"] and fields["ref_alone"]["threshold"] == 1.8
    # another process took the core: the host clock grew, the thread's CPU time did not
    assert not compare(alone, cpu_record(250.0, 105.0))[1]
    fields, slowed = compare(alone, cpu_record(250.0, 240.0))
    assert slowed and fields["ref_alone_ratio"] == pytest.approx(2.4)
    assert fields["ref_alone"]["figures"]["cpu"]["ratio"] == pytest.approx(2.4)
    # ... and the other way round: a load while it was timed alone hides nothing
    assert compare(cpu_alone(400.0, 100.0), cpu_record(250.0, 240.0))[1]


def test_compare_leaves_launch_bound_jitter_alone():
    # 0.5 us alone, 1.2 us in the timing stage: 2.4x, but less than a microsecond a call
    alone = {"points": {"cuda_graph": [[1, 0.5]]}}
    rec = {"method": "cuda_graph", "calls_per_sample": 1, "ref_us": 0.9, "ref_own_us": 1.2}
    fields, slowed = compare(alone, rec)
    assert not slowed and fields["ref_alone"]["figures"]["device"]["us"] == 1.2


def test_cuda_threshold_is_tighter_than_the_cpus():
    alone = {"points": {"cuda_graph": [[1, 100.0]]}}
    rec = {"method": "cuda_graph", "calls_per_sample": 1, "ref_us": 100.0, "ref_own_us": 140.0}
    assert compare(alone, rec)[1] and SLOWED_RATIO["cuda"] < 1.4 < SLOWED_RATIO["cpu"]


def test_compare_without_the_timing_stages_method_is_not_compared():
    alone = {"points": {"cuda_graph": [[1, 12.0]]}}
    fields, slowed = compare(alone, {"method": "cuda_events", "calls_per_sample": 1,
                                     "ref_us": 50.0})
    assert not slowed and fields["ref_alone"]["compared"] is False
    assert fields["ref_alone_ratio"] is None


def test_confirm_rejects_only_a_slowdown_that_persists():
    before, rec = cpu_alone(100.0, 100.0), cpu_record(250.0, 240.0)
    fields, slowed = compare(before, rec)
    assert slowed
    # a passing load: one measurement after is slow, the median is not
    passing = [cpu_alone(118.0, 115.0), cpu_alone(250.0, 240.0), cpu_alone(104.0, 101.0)]
    assert confirm(before, passing, fields, rec) is None
    assert fields["ref_alone"]["after"]["ratio"] == pytest.approx(1.15) and 1.15 < CONFIRM_RATIO
    # a state that persists (one measurement that missed it does not save the candidate)
    kept = [cpu_alone(245.0, 238.0), cpu_alone(110.0, 108.0), cpu_alone(300.0, 290.0)]
    found = confirm(before, kept, fields, rec)
    assert found is not None and found["kind"] == "reference_slowed"
    assert found["severity"] == "reject" and "2.38x" in found["detail"]


def test_without_a_measurement_the_comparison_is_recorded_not_judged():
    # Triton's interpreter on the CPU (a test mode) is compared but not judged: its own
    # heap traffic leaves honest references 1.4-1.6x slower alone after the timing stage.
    out = cpu_record(250.0, 240.0)
    poisoned = ref_alone.judge(cpu_alone(100.0, 100.0), out, None, None, torch.device("cpu"),
                               lambda: None)
    assert poisoned is False and not out.get("findings")
    assert out["ref_alone_ratio"] == pytest.approx(2.4) and out["ref_alone"]["judged"] is False


# ----------------------------------------------------------------------------- measurements


def _work(n: int):
    def fn(j: int) -> torch.Tensor:
        x = torch.zeros(1)
        for _ in range(n):
            x = x + 1.0
        return x
    return fn


def test_cpu_measurement_is_the_timing_stages_sample():
    alone = time_alone(_work(60), device="cpu", inputs=timing.FixedInputs())
    (k, wall, cpu), *more = alone["points"]["cpu_wall"][::-1]
    assert wall > 0 and cpu > 0 and 0 < alone["duration_s"] < 2.0
    # ~1 ms samples at the reference's own k, and the one-call point for the line
    assert k > 1 and more and more[0][0] == 1
    rec = timing.time_pair(_work(60), _work(30), device="cpu", seed=0, config=FAST_CPU,
                           inputs=timing.FixedInputs())
    assert rec["ok"] and rec["ref_cpu_us"] > 0
    fields, _ = compare(alone, rec)
    honest = fields["ref_alone_ratio"]
    assert honest is not None
    slow = timing.time_pair(_work(240), _work(30), device="cpu", seed=0, config=FAST_CPU,
                            inputs=timing.FixedInputs())
    fields, slowed = compare(alone, slow)
    assert slowed, fields
    # four times the work reads as a clearly larger ratio (1.9x and more seen under a loaded
    # 2-core CI run, about 4x when idle). The honest ratio itself is not
    # bounded here: for this sub-millisecond reference of Python-level torch calls it read
    # 1.0-2.2 on 2-core VMs under a test run's load (the pair's other function leaves the
    # caches and the heap in another state); real references stay far lower (the CPU
    # corpus's largest honest ratio: 1.17), and a ratio over the threshold is only a reject
    # when the reference timed alone again after the timing stage is slower too.
    assert fields["ref_alone_ratio"] > 1.5 * honest, (honest, fields["ref_alone_ratio"])


FAST_CPU = timing.TimingConfig(sample_budget_s=0.1, sample_max_s=0.2, min_samples=10,
                               n_boot=200)


def _virtual(monkeypatch) -> VirtualDevice:
    dev = VirtualDevice()
    virtual_host_clock(monkeypatch, dev)
    monkeypatch.setattr(ref_alone, "_perf_counter", timing._perf_counter)
    return dev


def _alone(dev: VirtualDevice, kernel) -> dict:
    return time_alone(lambda j: kernel(), device="cuda", inputs=timing.FixedInputs(),
                      config=SEQ, cuda_api=dev)


def _pair(dev: VirtualDevice, ref, cand) -> dict:
    return timing.time_pair(lambda: ref(), lambda: cand(), device=torch.device("cuda"), seed=0,
                            config=SEQ, cuda_api=dev)


def test_fake_cuda_reference_alone_matches_the_timing_stage(monkeypatch):
    dev = _virtual(monkeypatch)
    ref = VirtualKernel(dev, 40, 0.002)
    alone = _alone(dev, ref)
    assert set(alone["points"]) == {"cuda_graph", "cuda_events"}
    rec = _pair(dev, ref, VirtualKernel(dev, 20, 0.002))
    assert rec["method"] == "cuda_graph" and rec["ref_own_us"] == pytest.approx(40, rel=0.01)
    fields, slowed = compare(alone, rec)
    assert not slowed and fields["ref_alone_ratio"] == pytest.approx(1.0, abs=0.02)


def test_fake_cuda_slowed_reference_is_rejected(monkeypatch):
    dev = _virtual(monkeypatch)
    alone = _alone(dev, VirtualKernel(dev, 40, 0.002))
    slow = VirtualKernel(dev, 80, 0.002)  # what the candidate's state change made of it
    rec = _pair(dev, slow, VirtualKernel(dev, 20, 0.002))
    fields, slowed = compare(alone, rec)
    assert slowed and fields["ref_alone_ratio"] == pytest.approx(2.0, rel=0.02)
    found = confirm(alone, [_alone(dev, slow)], fields, rec)
    assert found is not None and found["kind"] == "reference_slowed"


class Uncapturable(VirtualKernel):
    def __call__(self):
        if self.dev.capturing is not None:
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
        return super().__call__()


def test_fake_cuda_eager_fallback_is_compared_with_eager_samples(monkeypatch):
    dev = _virtual(monkeypatch)
    ref = VirtualKernel(dev, 40, 0.002)
    alone = _alone(dev, ref)
    rec = _pair(dev, ref, Uncapturable(dev, 20, 0.002))
    assert rec["method"] == "cuda_events"
    fields, slowed = compare(alone, rec)
    assert not slowed and fields["ref_alone_ratio"] == pytest.approx(1.0, abs=0.1)


class LaunchCost(VirtualDevice):
    """Every graph replay costs `launch_us` on the device besides its kernels."""

    def __init__(self, launch_us: float) -> None:
        super().__init__()
        self.launch_us = launch_us

    def new_graph(self):
        g = super().new_graph()
        replay = g.replay

        def costly():
            self.now += self.launch_us * 1e-6
            replay()
        g.replay = costly
        return g


def test_fake_cuda_launch_bound_reference_next_to_a_slow_candidate(monkeypatch):
    # A 2 us reference alone gets hundreds of calls a replay; next to a candidate 5000 times
    # slower the timing stage gets a few, and the replay's 20 us launch is a large share of
    # each call: the line through the one-call samples accounts for it.
    dev = LaunchCost(20.0)
    virtual_host_clock(monkeypatch, dev)
    monkeypatch.setattr(ref_alone, "_perf_counter", timing._perf_counter)
    ref = VirtualKernel(dev, 2, 0.002)
    alone = _alone(dev, ref)
    rec = _pair(dev, ref, VirtualKernel(dev, 10000, 0.002))
    assert rec["calls_per_sample"] < 10 and rec["ref_own_us"] > 1.5 * 2.0
    fields, slowed = compare(alone, rec)
    assert not slowed and fields["ref_alone_ratio"] == pytest.approx(1.0, abs=0.05)


class Shared(VirtualDevice):
    """Other processes' work shares the device from `load_from` on (virtual seconds): every
    kernel, the device copy's included, takes `load` times longer."""

    def __init__(self, load: float) -> None:
        super().__init__()
        self.load, self.load_from = load, math.inf

    def advance(self, us):
        super().advance(us * (self.load if self.now >= self.load_from else 1.0))


class SharedKernel(VirtualKernel):
    def __call__(self):
        scale = self.dev.load if self.dev.now >= self.dev.load_from else 1.0
        return VirtualKernel(self.dev, self.us * scale, self.noise)()


def test_fake_cuda_shared_device_is_a_warning_not_a_reject(monkeypatch):
    # Another process's work from the timing stage on slows the reference and the device
    # copy alike: not judged (device_contended). Slowed alone, with the copy at its speed
    # before the import, it is a state change: reference_slowed.
    for load, kind, severity in ((2.0, "device_contended", "warn"),
                                 (1.0, "reference_slowed", "reject")):
        dev = Shared(load)
        virtual_host_clock(monkeypatch, dev)
        monkeypatch.setattr(ref_alone, "_perf_counter", timing._perf_counter)
        alone = _alone(dev, VirtualKernel(dev, 40, 0.002))
        assert alone["probe_us"] == pytest.approx(20.0)
        dev.load_from = dev.now
        slow = SharedKernel(dev, 40 if load > 1 else 80, 0.002)
        rec = _pair(dev, slow, VirtualKernel(dev, 20, 0.002))
        fields, slowed = compare(alone, rec)
        assert slowed
        found = confirm(alone, [_alone(dev, slow) for _ in range(3)], fields, rec)
        assert found is not None and (found["kind"], found["severity"]) == (kind, severity)
        assert fields["ref_alone"]["after"]["probe_spread"] == pytest.approx(load, rel=0.01)


# ----------------------------------------------------------------------------- evaluations


@pytest.fixture
def timed_ctx(worker_ctx, monkeypatch):
    monkeypatch.setattr(worker_ctx, "time_pair", timing.time_pair)
    monkeypatch.setattr(worker_ctx, "time_alone", time_alone)
    yield worker_ctx
    if hasattr(sys, "_ks_test_extra_passes"):
        del sys._ks_test_extra_passes  # the state a replaced worker would take with it


def test_candidate_that_slows_the_reference_is_rejected_and_the_worker_replaced(timed_ctx):
    result, poisoned, events = run_eval(timed_ctx, CASES / "cpu_slows_reference.py",
                                        problem=CASES / "problem_slowable.py", timing=True)
    assert result["status"] == "hacked", (result["message"], result["stages"].get("timing"))
    assert "reference_slowed" in kinds(result, "reject") and poisoned
    t = result["stages"]["timing"]
    assert t["ref_alone_ratio"] > SLOWED_RATIO["cpu"]
    assert t["ref_alone"]["after"]["ratio"] > CONFIRM_RATIO
    # the reference alone, under the lease, before the import; then the timing stage
    assert events.log[:3] == ["stage:load", "lease:acquire", "lease:release"]


def test_honest_candidate_keeps_its_figure_with_the_reference_alone_recorded(timed_ctx):
    result, poisoned, _ = run_eval(timed_ctx, CASES / "cpu_honest.py",
                                   problem=CASES / "problem_slowable.py", timing=True)
    assert result["status"] == "ok", result["message"]
    assert not poisoned
    t = result["stages"]["timing"]
    assert t["ref_alone_us"] > 0 and t["ref_alone"]["compared"]
    assert "ref_alone" in result["stages"]["load"]["phases_s"]


def test_the_time_alone_is_measured_once_per_case_in_a_worker(timed_ctx, monkeypatch):
    monkeypatch.setattr(timed_ctx, "alone", ref_alone.AloneCache())
    first, _, _ = run_eval(timed_ctx, CASES / "cpu_honest.py",
                           problem=CASES / "problem_slowable.py", timing=True)
    second, _, _ = run_eval(timed_ctx, CASES / "cpu_honest.py",
                            problem=CASES / "problem_slowable.py", timing=True)
    a, b = first["stages"]["timing"]["ref_alone"], second["stages"]["timing"]["ref_alone"]
    assert a["cached_age_s"] is None and b["cached_age_s"] >= 0
    assert b["points"] == a["points"] and b["compared"]
    # past its age, or for another problem, it is measured again
    timed_ctx.alone.MAX_AGE_S = 0.0  # the instance's (the worker's classes are guarded)
    third, _, _ = run_eval(timed_ctx, CASES / "cpu_honest.py",
                           problem=CASES / "problem_slowable.py", timing=True)
    assert third["stages"]["timing"]["ref_alone"]["cached_age_s"] is None


def test_reference_alone_is_skipped_without_timing(timed_ctx):
    result, _, events = run_eval(timed_ctx, CASES / "cpu_honest.py",
                                 problem=CASES / "problem_slowable.py", timing=False)
    assert result["status"] == "ok", result["message"]
    assert events.log == ["stage:load", "stage:correctness", "stage:audit"]
    assert "ref_alone" not in result["stages"]["load"]["phases_s"]


def test_a_contended_slowdown_is_not_credited_to_the_speedup():
    # the reference 2x slower than alone on a shared device: not judged, and the speedup is
    # reported as if the reference had run at its time alone
    out = {"speedup": 4.0, "speedup_ci95": [3.8, 4.2], "ref_alone_ratio": 2.0}
    found = {"kind": "device_contended", "detail": "shared", "severity": "warn"}
    ref_alone.credit_alone(out, found)
    assert out["speedup"] == pytest.approx(2.0) and out["speedup_contended"] == 4.0
    assert out["speedup_ci95"] == pytest.approx([1.9, 2.1])
    assert "2x, not the 4x timed" in found["detail"]
    steady = {"speedup": 1.5, "ref_alone_ratio": 0.98}  # not slower than alone: unchanged
    ref_alone.credit_alone(steady, dict(found))
    assert steady == {"speedup": 1.5, "ref_alone_ratio": 0.98}
