"""What the timing stage requires of the outputs and state of timed calls: plain tensors only
(a subclass could answer the timed checks' comparisons itself), and no process-wide switch
that only the timing stage flips (the garbage collector stays as it is)."""

from __future__ import annotations

import gc

import pytest
import torch

from kernelsmith_worker import timing
from kernelsmith_worker.findings import Hacked
from test_timing import FAST, FakeDevice, Kernel, run_fake


class Agreeable(torch.Tensor):
    """A Tensor subclass: its __torch_function__ could answer comparisons as it likes."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


class SubclassWhileTimed(Kernel):
    """A plain tensor until `after` calls, then a Tensor subclass."""

    def __init__(self, dev, us, after=0):
        super().__init__(dev, us)
        self.calls, self.after = 0, after

    def __call__(self):
        out = super().__call__()
        self.calls += 1
        return out.as_subclass(Agreeable) if self.calls > self.after else out


def test_a_tensor_subclass_returned_while_timed_is_rejected_on_cuda():
    dev = FakeDevice()
    with pytest.raises(Hacked) as e:
        run_fake(Kernel(dev, 40), SubclassWhileTimed(dev, 20), dev)
    assert [f["kind"] for f in e.value.findings] == ["timed_output_type"]
    assert "Agreeable" in e.value.findings[0]["detail"]


def test_a_subclass_in_an_output_tuple_is_rejected_on_the_cpu():
    x = torch.rand(64)
    with pytest.raises(Hacked) as e:
        timing.time_pair(lambda: (x + 1, x * 2), lambda: (x + 1, (x * 2).as_subclass(Agreeable)),
                         device="cpu", seed=0, config=FAST)
    assert e.value.findings[0]["kind"] == "timed_output_type"


def test_plain_outputs_and_non_tensor_outputs_pass():
    x = torch.rand(64)
    rec = timing.time_pair(lambda: (x + 1, 3), lambda: (x + 1, 3), device="cpu", seed=0,
                           config=FAST)
    assert rec["ok"], rec


def test_the_garbage_collector_is_as_outside_timing():
    dev = FakeDevice()
    seen = set()

    class Recording(Kernel):
        def __call__(self):
            seen.add(gc.isenabled())
            return super().__call__()
    assert gc.isenabled()
    rec = run_fake(Kernel(dev, 40), Recording(dev, 20), dev)
    assert rec["ok"], rec
    assert seen == {True}


def _cpu_rot():
    from kernelsmith_worker.timed_inputs import RotatingInputs

    base = [torch.rand(8, 64)]
    return RotatingInputs(base, torch.device("cpu"), 1 << 20,
                          lambda c, r: torch.allclose(c, r, atol=1e-5, rtol=1e-5))


def _cpu_time(rot, cand):
    from test_fresh_draws import cpu_timing
    return cpu_timing(rot, lambda j: torch.softmax(rot.ref_args(j)[0], 1), cand, samples=24)


def test_cpu_timing_checks_a_random_call_of_samples_that_share_one_output_buffer():
    # one buffer returned by every call, computed only by the call that runs last in a sample
    # (call 0): a random call's output is copied as it returns and checked
    rot, buf = _cpu_rot(), torch.empty(8, 64)

    def cand(j):
        if j == 0:
            torch.softmax(rot.args(j)[0], 1, out=buf)
        return buf

    rec = _cpu_time(rot, cand)
    assert rec["calls_per_sample"] > 1
    kinds = {f["kind"] for f in rec["findings"]}
    assert "aliased_outputs" in kinds and "timed_output_mismatch" in kinds


def test_cpu_timing_accepts_one_output_buffer_computed_by_every_call():
    rot, buf = _cpu_rot(), torch.empty(8, 64)

    def cand(j):
        return torch.softmax(rot.args(j)[0], 1, out=buf)

    rec = _cpu_time(rot, cand)
    assert rec["calls_per_sample"] > 1 and rec["timed_checks"] >= 2
    assert [f["kind"] for f in rec["findings"] if f["severity"] == "reject"] == []


def test_cpu_outputs_that_come_to_share_memory_while_timed_are_rejected():
    rot, buf, samples = _cpu_rot(), torch.empty(8, 64), [0]
    refresh = rot.refresh

    def counted(*a, **kw):  # one refresh a sample
        samples[0] += 1
        return refresh(*a, **kw)
    rot.refresh = counted

    def cand(j):  # fresh outputs while the sample size is chosen, one shared buffer after
        if samples[0] < 6:  # the two probe samples and a few timed ones
            return torch.softmax(rot.args(j)[0], 1)
        if j == 0:
            torch.softmax(rot.args(j)[0], 1, out=buf)
        return buf

    rec = _cpu_time(rot, cand)
    assert rec["calls_per_sample"] > 1
    assert "timed_output_aliasing" in {f["kind"] for f in rec["findings"]
                                       if f["severity"] == "reject"}


def test_cpu_one_buffer_for_the_addresses_seen_before_is_found_before_timing():
    # fresh outputs for a new address, one shared buffer for an address seen before (the
    # timed slots are fixed allocations): the first sample shows no sharing, the second does;
    # every call computes, so it is accepted, timed one checked call a sample
    rot, buf, seen = _cpu_rot(), torch.empty(8, 64), set()

    def cand(j):
        x = rot.args(j)[0]
        if x.data_ptr() not in seen:
            seen.add(x.data_ptr())
            return torch.softmax(x, 1)
        return torch.softmax(x, 1, out=buf)

    rec = _cpu_time(rot, cand)
    assert rec["calls_per_sample"] > 1
    assert "aliased_outputs" in {f["kind"] for f in rec["findings"]}
    assert [f["kind"] for f in rec["findings"] if f["severity"] == "reject"] == []


def test_cpu_demand_just_over_the_budget_is_timed_again_and_the_second_judged(monkeypatch):
    over = {"kind": "cpu_threads_over_budget", "severity": "reject", "detail": ""}
    mismatch = {"kind": "timed_output_mismatch", "severity": "reject", "detail": ""}
    runs = []

    def fake(first, second):
        def time_cpu(ref, cand, inputs, seed, cfg):
            runs.append(seed)
            return dict(first if len(runs) == 1 else second)
        return time_cpu

    def pair():
        runs.clear()
        return timing.time_pair(lambda: None, lambda: None, device="cpu", seed=5)

    near = {"findings": [over], "cand_threads_demanded": 1.45, "retime_for_threads": True}
    fine = {"findings": [], "cand_threads_demanded": 1.02, "retime_for_threads": False}
    monkeypatch.setattr(timing, "_time_cpu", fake(near, fine))
    rec = pair()
    assert runs == [5, 6] and rec["findings"] == [] and rec["first_threads_demanded"] == 1.45
    assert "retime_for_threads" not in rec
    monkeypatch.setattr(timing, "_time_cpu", fake(near, near))  # over again: rejected
    assert [f["kind"] for f in pair()["findings"]] == ["cpu_threads_over_budget"]
    far = dict(near, retime_for_threads=False)  # far over the budget: judged at once
    monkeypatch.setattr(timing, "_time_cpu", fake(far, fine))
    assert pair()["findings"] == [over] and runs == [5]
    both = dict(near, findings=[over, mismatch])  # rejected anyway: not timed again
    monkeypatch.setattr(timing, "_time_cpu", fake(both, fine))
    assert len(pair()["findings"]) == 2 and runs == [5]


def test_disjoint_is_checkable_for_every_call():
    from kernelsmith_worker.timing_blocks import _checkable, _disjoint

    a, b = torch.empty(64), torch.empty(64)
    for outs in ([a[:8], b], [a[:8], a[8:16]], [a[:8], a[4:12]], [(a[:8], a[:4]), b],
                 [(a[:8], b[:2]), b[4:]], [b, (a, b[1:3])], [a, a], [3, a]):
        assert _disjoint(outs) == (len(_checkable(outs)) == len(outs)), outs
