"""The CUDA timing stage on a fake device whose kernels advance a virtual clock (the fake CUDA
device of test_timing, with event times that do not depend on the load of the machine running
the test): the sequential stopping rule, and the steady-state figure of a power-limited
kernel."""

from __future__ import annotations

import math
import random

import pytest
import torch

from kernelsmith_worker import timing, timing_blocks, timing_cuda
from kernelsmith_worker.timing import TimingConfig
from test_timing import FAST, FakeDevice, FakeEvent, Kernel, run_fake


class VirtualEvent(FakeEvent):
    def __init__(self, dev):
        super().__init__()
        self.dev = dev

    def record(self, stream=None):
        self.t = self.dev.now


class VirtualDevice(FakeDevice):
    """A fake device whose kernels advance a virtual clock instead of busy-waiting: event
    times do not depend on the load of the machine running the test."""

    def __init__(self, seed=0):
        super().__init__()
        self.now, self.rnd = 0.0, random.Random(seed)

    def event(self):
        return VirtualEvent(self)

    def advance(self, us):
        self.now += us * 1e-6


class VirtualKernel(Kernel):
    """`us` per call on the virtual clock, times a lognormal factor of log-sd `noise`."""

    def __init__(self, dev, us, noise):
        super().__init__(dev, us)
        self.noise = noise

    def __call__(self):
        out = torch.empty(8)

        def op():
            self.dev.now += self.us * 1e-6 * math.exp(self.dev.rnd.gauss(0.0, self.noise))
            out.fill_(self.value)
        self.dev.launch(op)
        return out


class RefreshedInputs(timing.FixedInputs):
    """Counts refreshes on the fake device: a kernel there can tell how long it has run
    without new input values in between (a stand-in for a power-limited clock)."""

    def __init__(self, dev):
        self.dev = dev

    def refresh(self, signed=False):
        self.dev.streak = 0


class PowerLimited(Kernel):
    """Runs `slow` times longer once it has run more than `after` calls without a refresh
    between them: a tensor-core kernel that reaches the power cap only when run back to back."""

    def __init__(self, dev, us, after, slow):
        super().__init__(dev, us)
        self.after, self.slow = after, slow

    def __call__(self):
        out = torch.empty(8)

        def op():  # on the virtual clock: the figures do not depend on the machine's load
            self.dev.streak = getattr(self.dev, "streak", 0) + 1
            self.dev.now += 1e-6 * self.us * (self.slow if self.dev.streak > self.after else 1.0)
            out.fill_(self.value)
        self.dev.launch(op)
        return out


def _power_limited_run(slow):
    dev = VirtualDevice()
    ref, cand = VirtualKernel(dev, 60, 0.002), PowerLimited(dev, 20, after=400, slow=slow)
    return timing.time_pair(lambda j: ref(), lambda j: cand(), device=torch.device("cuda"),
                            seed=0, config=FAST, cuda_api=dev, inputs=RefreshedInputs(dev))


def test_fake_cuda_steady_state_is_reported_when_lower():
    rec = _power_limited_run(1.5)
    assert rec["ok"], rec
    assert rec["reported"] == "steady"
    assert rec["speedup"] == rec["steady"]["speedup"]
    assert rec["speedup_checked"] == pytest.approx(3.0, rel=0.01)
    assert rec["speedup"] == pytest.approx(2.0, rel=0.01)
    assert {b["fn"] for b in rec["blocks"]} >= {"cand_steady", "ref_steady"}


def test_fake_cuda_steady_state_a_clock_step_lower_is_not_reported():
    # back to back 0.5 % slower: within the step a short steady block may or may not reach
    rec = _power_limited_run(1.005)
    assert rec["steady"]["speedup"] < rec["speedup_checked"]
    assert rec["reported"] == "checked"
    assert rec["speedup"] == rec["speedup_checked"]


def test_fake_cuda_steady_state_never_raises_the_speedup():
    rec = _power_limited_run(0.5)
    assert rec["steady"]["speedup"] == pytest.approx(6.0, rel=0.01)
    assert rec["reported"] == "checked"  # faster back to back (a memo, say): not reported
    assert rec["speedup"] == rec["speedup_checked"]


# Samples of ~50 calls (1 ms of virtual time); rounds after the first get 1 s of real time,
# so a loaded machine's slow host still leaves room for a second round.
SEQ = TimingConfig(replay_target_s=1e-3, heat_s=0.03, heat_min_s=0.01, block_s=0.01,
                   steady_heat_s=0.01, steady_s=0.01, n_boot=200, wall_check_s=0.005,
                   seq_max_s=1.0)


def virtual_host_clock(monkeypatch, dev):
    """The timing stage's host clock reads the virtual one (plus a microsecond a read, so a loop
    that launches nothing still ends): how many calls a heat or a round runs no longer depends
    on the load of the machine running the test, and neither does the random stream."""
    reads = [0]

    def now():
        reads[0] += 1
        return dev.now + reads[0] * 1e-6
    for mod in (timing, timing_blocks, timing_cuda):
        monkeypatch.setattr(mod, "_perf_counter", now)


def within_interval(seq, truth):
    """The interval, widened to twice its half-width, holds the truth. The interval itself
    misses it at its level (alpha) for some seeds; twice as wide, a miss would be a ~4-sigma
    event, so a failure here means the estimate or its width is wrong."""
    lo, hi = seq["ci"]
    return abs(math.log(math.sqrt(lo * hi) / truth)) <= 2 * seq["halfwidth"]


def run_virtual(monkeypatch, ref_noise, cand_noise, seed=0):
    dev = VirtualDevice(seed)
    virtual_host_clock(monkeypatch, dev)
    return run_fake(VirtualKernel(dev, 40, ref_noise), VirtualKernel(dev, 20, cand_noise), dev,
                    cfg=SEQ)


def test_sequential_rule_stops_at_the_first_look_on_quiet_samples(monkeypatch):
    rec = run_virtual(monkeypatch, 0.01, 0.01)
    assert rec["ok"], rec
    seq = rec["sequential"]
    assert seq["stop"] == "precise" and seq["looks"] == 1, seq
    assert seq["halfwidth"] <= SEQ.seq_target and seq["alpha"] == SEQ.seq_alpha
    assert within_interval(seq, 2.0)  # the virtual clock's speedup
    assert [b["fn"] for b in rec["blocks"]] == ["ref", "cand", "cand", "ref", "cand_steady",
                                                "ref_steady"]
    assert rec["speedup"] == pytest.approx(2.0, rel=0.002)


def test_sequential_rule_spends_samples_where_the_noise_is(monkeypatch):
    rec = run_virtual(monkeypatch, 0.01, 0.5)  # per call: a sample of ~50 calls varies by ~7 %
    assert rec["ok"], rec
    seq = rec["sequential"]
    assert seq["looks"] >= 2 and seq["stop"] in ("precise", "looks", "time"), seq
    later = [b for b in rec["blocks"] if b.get("round", 0) >= 2]
    ref_n = sum(b["samples"] for b in later if b["fn"] == "ref")
    cand_n = sum(b["samples"] for b in later if b["fn"] == "cand")
    assert cand_n > 3 * ref_n, rec["blocks"]
    steady = {b["fn"]: b for b in rec["blocks"] if b["fn"].endswith("_steady")}
    assert steady["cand_steady"]["samples"] >= 2 * steady["ref_steady"]["samples"]
    # a sample is the mean of ~150 calls: its centre is the lognormal's mean, e^(sd^2 / 2)
    truth = 2.0 * math.exp((0.01 ** 2 - 0.5 ** 2) / 2)
    assert within_interval(seq, truth) and rec["speedup"] == pytest.approx(truth, rel=0.02)


def test_sequential_rounds_each_get_their_own_timed_checks(monkeypatch):
    from kernelsmith_worker.timed_inputs import RotatingInputs

    dev = VirtualDevice(1)
    virtual_host_clock(monkeypatch, dev)
    rot = RotatingInputs([torch.rand(8) + 0.5], torch.device("cpu"), 1 << 20,
                         lambda c, r: bool(torch.allclose(c, r, rtol=1e-2, atol=1e-2)))

    def fn(us, noise):
        def call(j):
            x = rot.ref_args(j)[0]
            out = torch.empty(8)
            dev.launch(lambda: (setattr(dev, "now", dev.now + us * 1e-6 * math.exp(
                dev.rnd.gauss(0.0, noise))), out.copy_(x * 2)))
            return out
        return call
    rec = timing.time_pair(fn(40, 0.01), fn(20, 0.5), device=torch.device("cuda"), seed=0,
                           config=SEQ, cuda_api=dev, inputs=rot)
    assert rec["ok"], rec
    looks = rec["sequential"]["looks"]
    assert looks >= 2
    assert rec["timed_checks"] == SEQ.timed_checks + SEQ.round_checks * (looks - 1)
    assert not [f for f in rec["findings"] if f["severity"] == "reject"], rec["findings"]


def test_every_candidate_block_gets_a_timed_check():
    # two candidate blocks of 40 samples and a signed block of 20, six checks: one at least in
    # each block, six in all, all within the segment
    for _ in range(50):
        plan = timing_blocks._check_plan([40, 40, 20], 6)
        assert len(plan) == 6 and all(0 <= i < 100 for i in plan)
        assert any(i < 40 for i in plan) and any(40 <= i < 80 for i in plan)
        assert any(i >= 80 for i in plan)
    assert timing_blocks._check_plan([3, 0, 2], 8) == set(range(5))  # fewer samples than checks


def test_a_kernel_wrong_on_signed_values_only_is_always_caught(monkeypatch):
    # Correct on the problem's own (positive) values, wrong once a sign is flipped: only the
    # signed block can show it. Drawn uniformly over the segment, the six checks all missed the
    # signed block about one run in four.
    from kernelsmith_worker.timed_inputs import RotatingInputs

    for seed in range(6):
        dev = VirtualDevice(seed)
        virtual_host_clock(monkeypatch, dev)
        rot = RotatingInputs([torch.rand(8) + 0.5], torch.device("cpu"), 1 << 20,
                             lambda c, r: bool(torch.allclose(c, r, rtol=1e-2, atol=1e-2)))

        def fn(us, wrong_when_signed):
            def call(j):
                x = rot.ref_args(j)[0]
                out = torch.empty(8)
                scale = 3.0 if wrong_when_signed and bool((x < 0).any()) else 2.0
                dev.launch(lambda: (setattr(dev, "now", dev.now + us * 1e-6),
                                    out.copy_(x * scale)))
                return out
            return call
        rec = timing.time_pair(fn(40, False), fn(20, True), device=torch.device("cuda"),
                               seed=seed, config=SEQ, cuda_api=dev, inputs=rot)
        kinds = {f["kind"] for f in rec["findings"] if f["severity"] == "reject"}
        assert kinds & {"timed_output_mismatch", "timed_output_unreproduced"}, (seed, kinds)
