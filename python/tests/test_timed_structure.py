"""Timed input slots that break a structure the problem's draws change (timed_inputs.py's
refresh), refreshes that launch the same work every time, and complex outputs judged on both
parts."""

import math

import torch

from kernelsmith_worker.timed_inputs import RotatingInputs
from kernelsmith_worker.value_domain import Observer


def test_refresh_breaks_a_structure_that_changes_between_draws_and_keeps_a_fixed_one():
    def draw():
        lengths = torch.randint(1, 513, (8,))
        support = (torch.rand(1, 512) < 0.25).float()
        return [torch.randn(8, 512) * support, torch.arange(512)[None, :] < lengths[:, None],
                torch.tril(torch.randn(32, 32))]

    draws, rot, domain = _observed_slots(draw)
    assert domain.varies == (True, True, False)
    assert rot.use(8) == 8
    broken_masks = filled = 0
    for _ in range(4):
        rot.refresh()
        for j in range(8):
            x, mask, tri = rot.args(j)
            prefix = mask.cumsum(dim=1) == torch.arange(1, 513)
            broken_masks += int(not bool((prefix | ~mask).all()))
            # zeros outside every draw's support: filled only by a run
            off = torch.stack([d[0] == 0 for d in draws]).all(dim=0)
            filled += int(bool((x[off] != 0).any()))
            assert torch.equal(tri == 0, draws[0][2] == 0) or any(
                torch.equal(tri == 0, d[2] == 0) for d in draws)  # the triangle kept
            assert int((x[off] != 0).sum()) <= 4 * 16  # a few runs, not a redraw
    assert broken_masks >= 24 and filled >= 16  # nearly every slot of every refresh
    assert rot.tampered() is None  # the slots are what the refresh wrote


def test_every_refresh_runs_the_same_operations():
    """The launch accounting records the evaluator's refresh once and subtracts it per
    sample: a refresh that made something on first use (launching more) was read on the GPU
    as a kernel log that missed the evaluator's launches."""
    from collections import Counter

    from torch.utils._python_dispatch import TorchDispatchMode

    class Ops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops[str(func)] += 1
            return func(*args, **(kwargs or {}))

    def draw():
        support = (torch.rand(1, 512) < 0.25).float()
        return [torch.randn(8, 512) * support, torch.randn(8, 512),
                torch.randint(0, 100, (4096,))]

    draws, rot, _ = _observed_slots(draw)
    rot.use(4)
    seen = []
    for signed in (False, False, True, True):
        with Ops() as mode:
            rot.refresh(signed)
        seen.append(mode.ops)
    assert seen[0] == seen[1] and seen[2] == seen[3]


def test_complex_outputs_are_judged_on_both_parts():
    from kernelsmith_worker import stress
    from kernelsmith_worker.timed_inputs import self_gap

    angle = torch.rand(64, 256) * 6.28
    ref = torch.polar(torch.ones_like(angle), angle)
    real_only = torch.complex(ref.real, torch.zeros_like(ref.real))
    assert stress.normwise_error(ref.clone(), ref, 1e-5, 1e-5)[0]
    assert not stress.normwise_error(real_only, ref, 1e-5, 1e-5)[0]
    assert not stress.normwise_error(ref.real.clone(), ref, 1e-5, 1e-5)[0]  # not complex
    assert stress.normwise_rel_error(ref.clone(), ref) == 0.0
    assert stress.normwise_rel_error(real_only, ref) > 0.5
    assert self_gap(ref.clone(), ref) == 0.0 and self_gap(real_only, ref) > 100
    assert self_gap(ref.conj().resolve_conj().conj(), ref) == 0.0  # a conjugate view
    assert not stress.finite(torch.complex(ref.real, ref.imag / 0.0))


def test_refresh_breaks_a_non_finite_padding_and_an_integer_mask():
    def draw():
        pad = torch.arange(512)[None, :] < torch.randint(1, 513, (8, 1))
        return [torch.randn(8, 512).masked_fill(pad, -math.inf), (~pad).long()]

    draws, rot, _ = _observed_slots(draw)
    rot.use(8)
    filled = flipped = 0
    for _ in range(4):
        rot.refresh()
        for j in range(8):
            s, m = rot.args(j)
            suffix = torch.isfinite(s).int().cummax(dim=1).values == torch.isfinite(s).int()
            filled += int(not bool(suffix.all()))  # a finite value inside the padding
            ones = m.cummax(dim=1).values == m
            flipped += int(not bool(ones.all()))  # a 0 after a 1: not a left padding
            assert bool(((m == 0) | (m == 1)).all())
    assert filled >= 16 and flipped >= 16
    assert rot.tampered() is None


def _observed_slots(draw):
    """Four draws of `draw()`, timed slots made from them (draw 0 the base, the rest the
    fresh draws), and the value domain observed over them."""
    draws = [draw() for _ in range(4)]
    obs = Observer(torch.device("cpu"))
    for d in draws:
        obs.add(d)
    domain = obs.domain([])
    return draws, RotatingInputs(draws[0], torch.device("cpu"), 1 << 22, lambda c, r: True,
                                 draws=draws[1:], domain=domain), domain
