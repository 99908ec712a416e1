"""The value domain (value_domain.py) the stress trials and the timed refresh keep."""

import math
import types

import torch
import torch.nn.functional as F

from kernelsmith_worker.correctness import TOLERANCES, run_trials
from kernelsmith_worker.inputs import InputCache
from kernelsmith_worker.stress import KINDS
from kernelsmith_worker.timed_inputs import RotatingInputs
from kernelsmith_worker.trials import Trials
from kernelsmith_worker.value_domain import Observer, TensorDomain, project

CPU = torch.device("cpu")


class Bce(torch.nn.Module):
    def forward(self, pred, target):
        return F.binary_cross_entropy(pred, target)


class Cdf(torch.nn.Module):
    def forward(self, cdf, u):
        return torch.searchsorted(cdf, u)


class Matmul(torch.nn.Module):
    def forward(self, a, b):
        return a @ b


def _bce_inputs():
    return [torch.sigmoid(torch.randn(16, 64)), torch.rand(16, 64)]


def _cdf_inputs():
    cdf = torch.rand(4, 100).add_(0.01).cumsum(dim=1)
    return [cdf, torch.rand(4, 32) * cdf[:, -1:]]


def _trials(model, get_inputs, name):
    problem = types.SimpleNamespace(sha256=name, path=f"{name}.py", get_inputs=get_inputs)
    trials = Trials(problem, model, 1, CPU, InputCache(), 1 << 24)
    trials.prepare(3)
    return trials


def test_project_is_the_identity_inside_the_range_and_reflects_outside():
    d = TensorDomain(0.25, 0.75, fold=True, monotone=False)
    t = torch.tensor([0.25, 0.5, 0.75, 0.2, 0.8, -3.0, 40.0, 1.25])
    project(t, d)
    assert torch.allclose(t[:3], torch.tensor([0.25, 0.5, 0.75]))
    assert torch.allclose(t[3:5], torch.tensor([0.3, 0.7]))  # reflected at lo and at hi
    assert bool((t >= 0.25 - 1e-6).all()) and bool((t <= 0.75).all())
    rows = torch.randn(3, 5, 7)
    project(rows, TensorDomain(-1.0, 1.0, fold=False, monotone=True))
    assert bool((rows[..., 1:] >= rows[..., :-1]).all())


def test_a_reference_that_asserts_on_a_range_keeps_its_inputs_there():
    trials = _trials(Bce(), _bce_inputs, "bce")
    assert "aten.binary_cross_entropy" in trials.domain.ops
    lo_hi = [(float(t.min()), float(t.max())) for t in trials.pristine(0).inputs]
    for kind in KINDS:
        data = trials.stress(kind)  # the reference accepted every draw (it raises outside)
        assert data is not None and bool(torch.isfinite(data.reference).all())
        for t, (lo, hi), d in zip(data.inputs, lo_hi, trials.domain.tensors):
            assert d is not None and d.fold and d.lo <= lo and hi <= d.hi
            assert float(t.min()) >= d.lo - 1e-6 and float(t.max()) <= d.hi
        assert not torch.equal(data.inputs[0], trials.pristine(0).inputs[0])


def test_rand_inputs_without_such_an_op_keep_their_signed_and_wide_values():
    trials = _trials(Matmul(), lambda: [torch.rand(16, 32), torch.rand(32, 8)], "mm")
    assert not trials.domain.restricts()
    signed = trials.stress("signed").inputs[0]
    assert bool((signed < 0).any())
    wide = trials.stress("wide").inputs[0].abs()
    assert float(wide.max() / wide.min()) > 100


def test_the_op_list_only_applies_to_ops_the_reference_ran():
    obs = Observer(CPU)
    for _ in range(3):
        obs.add(_bce_inputs())
    assert not obs.domain([]).restricts()  # inputs in [0, 1] alone restrict nothing
    assert not obs.domain(["aten.mm", "aten.candidate_op"]).restricts()
    assert all(d is not None and d.fold for d in obs.domain(["aten.bernoulli"]).tensors)


def test_rows_every_draw_makes_sorted_stay_sorted():
    trials = _trials(Cdf(), _cdf_inputs, "cdf")
    cdf_dom, u_dom = trials.domain.tensors
    assert cdf_dom is not None and cdf_dom.monotone and not cdf_dom.fold
    assert u_dom is None  # u is not sorted along its rows
    for kind in KINDS:
        cdf = trials.stress(kind).inputs[0]
        assert bool((cdf[..., 1:] >= cdf[..., :-1]).all())
        if kind not in ("blocks", "spikes"):  # the trial's own values (and signs), rescaled
            assert bool((cdf < 0).any())  # still signed: sorted, not restricted


def test_masks_and_constant_rows_are_not_taken_for_sorted_rows():
    obs = Observer(CPU)
    for _ in range(3):
        obs.add([torch.triu(torch.ones(16, 16)), torch.full((4, 8), 0.5),
                 torch.arange(32.0).expand(2, 32), torch.rand(16, 2)])
    tri, const, ramp, pairs = obs.domain([]).tensors
    assert tri is None and const is None and pairs is None
    assert ramp is not None and ramp.monotone
    odd = Observer(CPU)
    odd.add([torch.arange(8.0)])
    odd.add([torch.arange(8.0), torch.arange(8.0)])  # another number of tensors
    assert not odd.domain([]).restricts()


def test_timed_refresh_keeps_the_domain_on_signed_samples():
    for model, get_inputs, name in ((Bce(), _bce_inputs, "bce"), (Cdf(), _cdf_inputs, "cdf")):
        trials = _trials(model, get_inputs, name)
        base = trials.pristine(0).inputs
        draws = [get_inputs() for _ in range(3)]
        rot = RotatingInputs(base, CPU, 1 << 24, lambda c, r: True, draws=draws,
                             domain=trials.domain)
        rot.use(3)
        for signed in (False, True, True):
            rot.refresh(signed)
            for j in range(3):
                args = rot.args(j)
                with torch.no_grad():
                    model(*args)  # the reference accepts every refreshed sample
                for t, d in zip(args, trials.domain.tensors):
                    if d is not None and d.fold:
                        assert float(t.min()) >= d.lo - 1e-6 and float(t.max()) <= d.hi
                    if d is not None and d.monotone:
                        assert bool((t[..., 1:] >= t[..., :-1]).all())
        assert rot.tampered() is None


def test_every_stress_trial_skipped_is_counted():
    class NoStress:
        domain = None

        def __init__(self):
            self._in = [torch.rand(4, 4)]

        def pristine(self, trial):
            return types.SimpleNamespace(inputs=self._in, reference=self._in[0] * 2,
                                         has_reference=True)

        def reference(self, trial):
            return self._in[0] * 2

        def stress(self, kind):
            return None

    outcome = run_trials(2, TOLERANCES["default"], NoStress(), lambda args: args[0] * 2, CPU)
    assert outcome.status is None
    assert outcome.record["stress_skipped"] == len(KINDS)


class MaskedRowMean(torch.nn.Module):
    def forward(self, x, mask):
        m = mask.to(x.dtype)
        return (x * m).sum(dim=1) / m.sum(dim=1)


def _prefix_mask_inputs():
    lengths = torch.randint(1, 257, (16,))
    return [torch.randn(16, 256), torch.arange(256)[None, :] < lengths[:, None]]


def test_structure_that_changes_between_draws_is_told_from_a_fixed_one():
    obs = Observer(CPU)
    for _ in range(3):
        support = (torch.rand(1, 64) < 0.25).float()  # one random support for every row
        obs.add([torch.randn(8, 64) * support, torch.tril(torch.randn(16, 16)),
                 torch.rand(8, 64) < 0.5, torch.triu(torch.ones(8, 8, dtype=torch.bool)),
                 torch.rand(8, 64), torch.randint(0, 9, (8, 64))])
    assert obs.domain([]).varies == (True, False, True, False, False, False)
    assert not obs.domain([]).restricts()  # the structure restricts no value


def test_spikes_break_a_structure_that_changes_between_draws_where_the_runs_are():
    trials = _trials(MaskedRowMean(), _prefix_mask_inputs, "masked_mean")
    assert trials.domain.varies == (False, True)  # x has no zeros; the mask's lengths vary
    x0, mask0 = trials.pristine(0).inputs
    x, mask = trials.stress("spikes").inputs
    flipped = mask != mask0
    assert bool(flipped.any())  # holes in the prefix, or set bits past its end
    # the flipped bits lie in runs of x that were spiked: a kernel that takes the mask for a
    # prefix counts (or drops) values that weigh about a sixteenth of x's sum each
    assert bool((x[flipped].abs() > x0[flipped].abs()).all())
    rows = flipped.any(dim=1)
    prefix = mask.cumsum(dim=1) == torch.arange(1, 257)  # a prefix: every bit up to j set
    assert not bool((prefix | ~mask).all(dim=1)[rows].all())


def test_non_finite_padding_and_integer_masks_that_change_between_draws_are_structure():
    causal = torch.full((16, 16), -math.inf).triu(1)  # one pattern for every draw
    obs = Observer(CPU)
    for _ in range(3):
        lengths = torch.randint(1, 65, (8, 1))
        pad = torch.arange(64)[None, :] >= lengths
        obs.add([torch.randn(8, 64).masked_fill(pad, -math.inf), torch.randn(16, 16) + causal,
                 (~pad).long(), torch.randint(0, 9, (8, 64)), torch.randint(0, 2, (8, 64)) + 1])
    # -inf padding of random lengths, a 0/1 int64 mask: data; a fixed causal -inf pattern,
    # labels, and 1/2 values: not (only 0/1 integer tensors are masks)
    assert obs.domain([]).varies == (True, False, True, False, False)


class LeftPaddedSum(torch.nn.Module):
    def forward(self, scores, mask):
        return torch.softmax(scores, dim=1), (scores.nan_to_num(neginf=0.0) * mask).sum(dim=1)


def _padded_inputs():
    lengths = torch.randint(1, 257, (16, 1))
    pad = torch.arange(256)[None, :] < lengths  # left padding
    return [torch.randn(16, 256).masked_fill(pad, -math.inf), (~pad).long()]


def test_spikes_break_a_non_finite_padding_and_an_integer_mask():
    trials = _trials(LeftPaddedSum(), _padded_inputs, "left_padded")
    assert trials.domain.varies == (True, True)
    s0, m0 = trials.pristine(0).inputs
    s, m = trials.stress("spikes").inputs
    assert m.dtype == torch.int64 and bool(((m == 0) | (m == 1)).all())
    assert bool((m != m0).any())  # runs of the mask flipped
    filled = torch.isinf(s0) & torch.isfinite(s)
    assert bool(filled.any()) and int(filled.sum()) <= 4 * 16  # a few runs, not a redraw
    assert bool(torch.isfinite(s[~torch.isinf(s0)]).all())  # finite values stay finite


def test_spikes_fill_zeros_of_a_random_support_but_keep_a_triangle():
    def inputs():
        support = (torch.rand(1, 1024) < 0.25).float()
        return [torch.randn(4, 1024) * support, torch.tril(torch.randn(64, 64))]

    class Sums(torch.nn.Module):
        def forward(self, x, t):
            return x.sum(dim=1), t.sum()

    trials = _trials(Sums(), inputs, "support")
    assert trials.domain.varies == (True, False)
    x0, t0 = trials.pristine(0).inputs
    x, t = trials.stress("spikes").inputs
    assert bool(((x0 == 0) & (x != 0)).any())  # zeros filled in the runs
    assert bool((x[x0 == 0] != 0).float().mean() < 0.05)  # only there
    assert bool(((t == 0) == (t0 == 0)).all())  # the triangle's zeros kept
