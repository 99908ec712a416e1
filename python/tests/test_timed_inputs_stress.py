"""Timed input slots (timed_inputs.py) and stress trials (stress.py)."""

import math

import pytest
import torch

from kernelsmith_worker.stress import normwise_error, stress_inputs
from kernelsmith_worker.timed_inputs import RotatingInputs


def test_slots_keep_structure_and_never_repeat():
    base = torch.triu(torch.rand(8, 8)) - 0.5 * torch.triu(torch.ones(8, 8))
    rot = RotatingInputs([base, 7, torch.arange(3)], torch.device("cpu"), 1 << 20,
                         lambda c, r: True)
    assert rot.use(4) == 4
    rot.refresh()
    first = [rot.args(j)[0].clone() for j in range(4)]
    rot.refresh()
    second = [rot.args(j)[0].clone() for j in range(4)]
    for x in first + second:
        assert torch.equal(x == 0, base == 0)  # zeros (the triangle) kept
    # no two slots of a sample, and no slot across samples, share a value pattern (ratios
    # to the base differ: a memo keyed on rescaled values cannot serve them)
    ratios = [(x.abs() / base.abs().where(base != 0, torch.ones_like(base))).flatten() for x in first + second]
    for i in range(len(ratios)):
        for j in range(i + 1, len(ratios)):
            r = ratios[i] / ratios[j].where(ratios[j] != 0, torch.ones_like(ratios[j]))
            assert float(r.max() - r.min()) > 1e-3
    assert rot.args(5)[1] == 7 and torch.equal(rot.args(1)[2], torch.arange(3))


def test_slots_are_bounded_by_the_budget():
    base = torch.rand(1024)  # 4 KiB
    rot = RotatingInputs([base], torch.device("cpu"), 6 * 4096, lambda c, r: True)
    assert rot.use(100) == 3  # slots and scratch: the timing stage puts at most 3 calls in a sample


def test_stress_inputs_redraw_floats_only_and_keep_zeros():
    x = torch.tril(torch.rand(16, 16))
    idx = torch.randint(0, 10, (5,))
    signed, ints = stress_inputs([x, idx], "signed", torch.device("cpu"))
    assert torch.equal(ints, idx)
    assert torch.equal(signed == 0, x == 0) and bool((signed < 0).any())
    wide = stress_inputs([x], "wide", torch.device("cpu"))[0]
    nz = wide[x != 0].abs()
    assert float(nz.max() / nz.min()) > 100


def test_normwise_error_separates_rounding_from_approximation():
    a, b = torch.randn(64, 512), torch.randn(512, 64)
    ref = a @ b
    honest = (a.half().float() @ b.half().float())  # rounded inputs, honest algorithm
    assert normwise_error(honest, ref, 1e-2, 1e-2)[0]
    mean_field = a.sum(1, keepdim=True) * b.mean(0, keepdim=True)
    ok, why = normwise_error(mean_field, ref, 1e-2, 1e-2)
    assert not ok and "relative error" in why
    assert not normwise_error(torch.full_like(ref, math.nan), ref, 1e-2, 1e-2)[0]


def test_signed_refreshes_draw_element_signs():
    base = torch.rand(256) + 0.1
    rot = RotatingInputs([base], torch.device("cpu"), 1 << 20, lambda c, r: True)
    rot.use(1)
    rot.refresh()
    assert bool((rot.args(0)[0] > 0).all())
    rot.refresh(signed=True)
    x = rot.args(0)[0]
    assert 50 < int((x < 0).sum()) < 206 and torch.equal(x.abs() > 0, base > 0)


def test_a_non_finite_reference_needs_the_same_non_finite_values_and_agreement_elsewhere():
    def close(c, r):
        return bool(torch.allclose(c, r))

    nan, inf = float("nan"), float("inf")
    rot = RotatingInputs([torch.rand(4)], torch.device("cpu"), 1 << 20, close)
    ref = torch.tensor([nan, inf, 1.0, 2.0])
    assert rot.agree(torch.tensor([nan, inf, 1.0, 2.0]), ref)
    assert not rot.agree(torch.zeros(4), ref)  # garbage behind the NaN: no longer skipped
    assert not rot.agree(torch.tensor([nan, -inf, 1.0, 2.0]), ref)  # another infinity
    assert not rot.agree(torch.tensor([nan, inf, 1.0, 9.0]), ref)  # the finite rest differs
    assert rot.agree(torch.full((4,), nan), torch.full((4,), nan))
    assert not rot.agree(torch.zeros(4), torch.ones(4))


def test_refreshed_values_stay_inside_the_bases_domain():
    # probabilities stay in [0, 1) (a logit or a binary cross-entropy refuses others), signs
    # are kept; 2-D integer targets take only values the problem produced (an ignore index
    # of -100 beside class ids in [0, 7) must not become -23)
    p = torch.rand(64, 32) * 0.999
    targets = torch.randint(0, 7, (16, 8))
    targets[::3] = -100
    rot = RotatingInputs([p, targets], torch.device("cpu"), 1 << 24, lambda c, r: True)
    rot.use(4)
    for _ in range(5):
        rot.refresh()
        for j in range(4):
            x, t = rot.args(j)
            assert bool((x >= 0).all()) and bool((x < 1).all())
            assert set(t.unique().tolist()) <= set(targets.unique().tolist())
    assert any(not torch.equal(rot.args(j)[1], targets) for j in range(4))


def test_non_finite_values_written_into_the_check_copies_are_tampering():
    rot = RotatingInputs([torch.rand(8)], torch.device("cpu"), 1 << 20, lambda c, r: True)
    rot.use(2)
    rot.refresh()
    assert rot.tampered() is None
    rot._pools[0][1][1][3] = float("nan")  # the pool row call 1's check reads, and its slot
    rot.args(1)[0][3] = float("nan")
    assert "non-finite" in rot.tampered()


def test_slots_are_separate_allocations_and_int_values_are_redrawn_in_range():
    ids = torch.randint(3, 9, (4, 6))
    labels = torch.tensor([4, 0, 7, 7, 2, 9, 1, 3, 8, 5, 6, 0])
    perm = torch.tensor([4, 0, 7, 2, 9, 1, 3, 8, 5, 6])
    rot = RotatingInputs([torch.rand(4), ids, torch.arange(5), labels, perm],
                         torch.device("cpu"), 1 << 20, lambda c, r: True)
    rot.use(4)
    rot.refresh()
    ptrs = {rot.args(j)[0].untyped_storage().data_ptr() for j in range(4)}
    assert len(ptrs) == 4 and all(rot.args(j)[0].storage_offset() == 0 for j in range(4))
    drawn = [rot.args(j)[1] for j in range(4)]
    assert all(int(d.min()) >= 3 and int(d.max()) <= 8 for d in drawn)
    assert any(not torch.equal(d, ids) for d in drawn)
    assert all(torch.equal(rot.args(j)[2], torch.arange(5)) for j in range(4))  # sorted: kept
    # unsorted 1-D that repeats values: resampled from its values (a new multiset)
    drawn = [rot.args(j)[3] for j in range(4)]
    assert all(set(d.tolist()) <= set(labels.tolist()) for d in drawn)
    assert any(not torch.equal(d.sort().values, labels.sort().values) for d in drawn)
    perms = [rot.args(j)[4] for j in range(4)]  # unsorted distinct: same values, new order
    assert all(torch.equal(p.sort().values, perm.sort().values) for p in perms)
    assert any(not torch.equal(p, perm) for p in perms)


def test_stress_trials_fall_back_to_positive_values_where_the_reference_is_nan():
    import types
    from kernelsmith_worker.inputs import InputCache
    from kernelsmith_worker.trials import Trials

    class SqrtModel(torch.nn.Module):
        def forward(self, a):
            return torch.sqrt(a).sum(dim=1)

    problem = types.SimpleNamespace(sha256="t", path="sqrt.py",
                                    get_inputs=lambda: [torch.rand(8, 32)])
    trials = Trials(problem, SqrtModel(), 1, torch.device("cpu"), InputCache(), 1 << 20)
    for kind in ("signed", "wide"):
        data = trials.stress(kind)
        assert data is not None and bool((data.inputs[0] >= 0).all())
        assert bool(torch.isfinite(data.reference).all())


def test_stress_trials_keep_a_partly_finite_reference_and_skip_only_a_nowhere_finite_one():
    import types
    from kernelsmith_worker.inputs import InputCache
    from kernelsmith_worker.trials import Trials

    class OverflowModel(torch.nn.Module):
        def forward(self, a):
            return torch.exp(a * 1e4)  # inf on trial 0's values in [0, 1) (most of them)

    class NanModel(torch.nn.Module):
        def forward(self, a):
            return torch.log(-1.0 - a.abs())  # NaN everywhere, whatever the signs

    problem = types.SimpleNamespace(sha256="o", path="exp.py",
                                    get_inputs=lambda: [torch.rand(8, 32)])
    trials = Trials(problem, OverflowModel(), 1, torch.device("cpu"), InputCache(), 1 << 20)
    trials.prepare(2)
    data = trials.stress("signed")  # exp of the negative values is finite: compared there
    assert data is not None and bool(torch.isfinite(data.reference).any())
    assert trials.pristine(0).finite is False  # read when the reference ran, kept with it
    nan = Trials(problem, NanModel(), 1, torch.device("cpu"), InputCache(), 1 << 20)
    assert nan.stress("signed") is None


def test_normwise_error_compares_the_references_finite_positions():
    ref = torch.randn(4, 64)
    ref[:, 32:] = -math.inf  # a masked log-softmax's padding
    honest = ref.clone()
    honest[:, :32] += 1e-4
    assert normwise_error(honest, ref, 1e-2, 1e-2)[0]
    finite_there = honest.clone()
    finite_there[:, 32:] = -1e4  # a stable kernel may be finite where the reference is not
    assert normwise_error(finite_there, ref, 1e-2, 1e-2)[0]
    shifted = honest.clone()
    shifted[:, :32] += 0.5  # an approximation, off where the reference is finite
    ok, why = normwise_error(shifted, ref, 1e-2, 1e-2)
    assert not ok and "relative error" in why
    hole = honest.clone()
    hole[0, 0] = math.inf
    ok, why = normwise_error(hole, ref, 1e-2, 1e-2)
    assert not ok and "NaN/inf" in why


def test_sparse_stress_keeps_a_sixteenth_and_small_tensors_dense():
    x = torch.rand(256, 256) + 0.1
    small = torch.rand(8, 8) + 0.1
    big, tiny = stress_inputs([x, small], "sparse", torch.device("cpu"))
    density = float((big != 0).float().mean())
    assert 0.04 < density < 0.09  # 1/16 = 0.0625
    assert bool((big < 0).any()) and bool((big > 0).any())
    assert bool((tiny != 0).all())


def test_sparse_stress_breaks_mean_field_matmul_that_iid_draws_let_pass():
    # sqrt(A) @ B with a long K: on any iid positive draw the rank-1 product of row and column
    # sums is within the norm-wise budget (the sums concentrate); on the sparse draw it is not.
    torch.manual_seed(0)
    m, k, n = 16, 65536, 16
    cpu = torch.device("cpu")

    def ref(a, b):
        return torch.sqrt(a) @ b

    def mean_field(a, b):
        return torch.sqrt(a).sum(1, keepdim=True) * b.sum(0, keepdim=True) / a.shape[1]

    a, b = torch.rand(m, k), torch.rand(k, n)
    assert normwise_error(mean_field(a, b), ref(a, b), 1e-2, 1e-2)[0]
    sa, sb = (t.abs() for t in stress_inputs([a, b], "sparse", cpu))  # the positive fallback
    ok, why = normwise_error(mean_field(sa, sb), ref(sa, sb), 1e-2, 1e-2)
    assert not ok and "relative error" in why


def test_the_reference_reads_its_own_objects_and_a_re_seated_slot_is_seen():
    base = torch.rand(8, 16)
    rot = RotatingInputs([base], torch.device("cpu"), 1 << 20, lambda c, r: True)
    rot.use(2)
    rot.refresh()
    assert rot.tampered() is None
    cand, ref = rot.args(1)[0], rot.ref_args(1)[0]
    assert cand is not ref and cand.data_ptr() == ref.data_ptr()
    assert not cand._is_view() and cand._base is None  # like a trial's input
    cand.set_(cand.t().contiguous().t())  # same values, column-major storage of its own
    assert ref.is_contiguous() and torch.equal(ref, cand)  # the reference's view is untouched
    assert "re-seated" in rot.tampered()


def test_values_written_into_a_slot_are_seen_and_the_check_reads_the_refreshed_values():
    base = torch.rand(8, 16) + 0.5
    rot = RotatingInputs([base], torch.device("cpu"), 1 << 20, lambda c, r: True)
    rot.use(2)
    rot.refresh()
    refreshed = rot.ref_args(0)[0].clone()
    rot.args(0)[0][0, 0] = float("nan")  # the candidate poisons its input
    assert "values were written" in rot.tampered()
    assert bool(torch.isnan(rot.ref_args(0)[0]).any())  # same memory outside a check
    with rot.pristine():
        checked = rot.ref_args(0)[0]
    assert torch.equal(checked, refreshed)  # a check's reference reads what was refreshed
    rot.refresh()
    assert rot.tampered() is None  # the refresh rewrote the slot


def test_own_distribution_checks_hold_the_candidate_to_its_trial_precision():
    from kernelsmith_worker.stress import normwise_rel_error

    ref = torch.rand(64, 64)
    low_precision = ref + 0.005 * torch.randn_like(ref) * ref  # ~0.5 % off: in the norm budget
    assert normwise_error(low_precision, ref, 1e-2, 1e-2)[0]
    limit = 1e-3  # the trials' error was tiny: max(4 x tiny, floor)
    rot = RotatingInputs([torch.rand(4)], torch.device("cpu"), 1 << 20,
                         lambda c, r: normwise_error(c, r, 1e-2, 1e-2)[0],
                         lambda c, r: normwise_rel_error(c, r) <= limit)
    rot.use(1)
    rot.refresh()
    assert rot.agree(ref.clone(), ref)
    assert not rot.agree(low_precision, ref)  # less precise only while timed
    rot.refresh(signed=True)
    assert rot.agree(low_precision, ref)  # signed samples: the norm-wise budget alone


def test_an_input_with_nan_is_not_taken_for_a_written_slot():
    base = torch.rand(8, 16)
    base[2, 3] = float("nan")  # a problem may hand over NaN on purpose
    rot = RotatingInputs([base], torch.device("cpu"), 1 << 20, lambda c, r: True)
    rot.use(2)
    rot.refresh()
    assert rot.tampered() is None


def test_slots_keep_the_problems_strides_where_they_describe_dense_memory():
    # (batch, seq, heads, dim) viewed as (batch, heads, seq, dim), seq 1: a kernel may read the
    # size-1 dimension's stride (heads * dim), which a contiguous copy would make dim.
    qkv = torch.rand(4, 1, 8, 16).transpose(1, 2)
    expanded = torch.rand(16).expand(3, 16)  # overlapping memory: timed contiguous
    rot = RotatingInputs([qkv, expanded], torch.device("cpu"), 1 << 20, lambda c, r: True)
    rot.use(3)
    rot.refresh()
    for j in range(3):
        q, e = rot.args(j)
        assert q.stride() == qkv.stride()  # (128, 16, 128, 1); contiguous would give 16
        assert e.is_contiguous() and e.shape == expanded.shape
        ratio = q / qkv  # trial 0's values rescaled: one scale, a per-element jitter
        assert float(ratio.max() / ratio.min()) < 1.25 / 0.75 + 1e-6
        with rot.pristine():  # the timed check's reference reads the same layout
            q_ref, e_ref = rot.ref_args(j)
        assert q_ref.stride() == qkv.stride() and torch.equal(q_ref, q)
    assert rot.tampered() is None


def test_a_write_into_any_slot_is_found_whatever_the_chunking(monkeypatch):
    from kernelsmith_worker import timed_inputs

    for chunk in (1, 64, timed_inputs.CHECK_CHUNK):  # one slot a chunk, a few, all at once
        monkeypatch.setattr(timed_inputs, "CHECK_CHUNK", chunk)
        rot = RotatingInputs([torch.rand(6, 4).t()], torch.device("cpu"), 1 << 20,
                             lambda c, r: True)  # transposed: slots keep the strides
        rot.use(5)
        rot.refresh()
        assert rot.tampered() is None
        rot.args(3)[0][1, 2] += 1
        assert "written" in rot.tampered()


def test_fresh_draws_written_on_the_device_are_tampering():
    draws = [[torch.rand(8)] for _ in range(3)]
    rot = RotatingInputs([torch.rand(8)], torch.device("cpu"), 1 << 20, lambda c, r: True,
                         draws=draws)
    rot.use(2)
    rot.refresh()
    assert rot.tampered() is None
    next(iter(rot._stacks.values())).fill_(0.5)  # every draw rewritten: any check finds it
    assert "fresh draws" in rot.tampered()


def test_blocks_keep_16_short_runs_and_shrink_the_rest():
    from kernelsmith_worker.stress import BLOCK_RUN_MAX, BLOCK_RUNS

    x = torch.rand(64, 1024) + 0.01
    t = x.t()  # another layout: kept
    (b,) = stress_inputs([t], "blocks", torch.device("cpu"))
    assert b.stride() == t.stride()
    factor = (b / t).reshape(-1)
    background = factor == factor.min()
    assert torch.allclose(factor[background], torch.tensor(1.0 / t.numel()))
    assert 0 < int((~background).sum()) <= BLOCK_RUNS * BLOCK_RUN_MAX
    lengths = (1.0 / factor[~background]).round()
    assert bool(((lengths >= 1) & (lengths <= BLOCK_RUN_MAX)).all())
    assert bool((b > 0).all()) and bool((b < 1.01).all())  # signs and range kept
    runs = int((background[1:] != background[:-1]).sum())
    assert runs <= 2 * BLOCK_RUNS  # runs of consecutive elements, not scattered positions


def test_a_sampled_reduction_passes_the_problems_values_and_fails_blocks():
    from kernelsmith_worker.stress import normwise_error

    def sampled_sum(x):  # every 8th block of 256, scaled up: right for iid values
        blocks = x.reshape(-1, 256)
        return blocks[::8].sum() * 8

    x = torch.rand(1 << 18)
    assert normwise_error(sampled_sum(x), x.sum(), 1e-2, 1e-2)[0]
    # one draw lets this sampler through about 1-2 % of the time (its sample can hold just
    # its share of the runs): three draws all do about 1e-5 of the time
    draws = [stress_inputs([x], "blocks", torch.device("cpu"))[0] for _ in range(3)]
    assert not all(normwise_error(sampled_sum(b), b.sum(), 1e-2, 1e-2)[0] for b in draws)


def test_spikes_scale_up_16_short_runs_and_keep_every_other_value():
    from kernelsmith_worker.stress import BLOCK_RUNS, SPIKE_RUN_MAX, SPIKE_SHARE

    x = torch.rand(64, 1024) + 0.01
    t = x.t()  # another layout: kept
    (b,) = stress_inputs([t], "spikes", torch.device("cpu"))
    assert b.stride() == t.stride() and b.dtype == t.dtype
    factor = (b / t).reshape(-1)
    background = factor == 1.0
    assert 0 < int((~background).sum()) <= BLOCK_RUNS * SPIKE_RUN_MAX
    lengths = (SPIKE_SHARE * t.numel() / factor[~background]).round()
    assert bool(((lengths >= 1) & (lengths <= SPIKE_RUN_MAX)).all())
    assert bool((b > 0).all())  # signs kept
    runs = int((background[1:] != background[:-1]).sum())
    assert runs <= 2 * BLOCK_RUNS  # runs of consecutive elements, not scattered positions
    share = float(b.sum() / t.sum()) - 1.0  # the runs' sum over the rest's: about 1
    assert 0.5 < share < 1.6


def test_spikes_keep_zeros_integers_and_small_tensors():
    x = torch.tril(torch.rand(512, 512))
    ids = torch.arange(1000)
    small = torch.rand(15, 17)  # fewer than 256 elements: as it is
    b, i, s = stress_inputs([x, ids, small], "spikes", torch.device("cpu"))
    assert torch.equal(b == 0, x == 0)
    assert torch.equal(i, ids) and torch.equal(s, small)
    assert not torch.equal(b, x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_spikes_stay_below_the_dtypes_cap(dtype):
    from kernelsmith_worker.stress import spike_cap

    cap = spike_cap(dtype)
    assert cap == (2.0 ** 7 if dtype == torch.float16 else 2.0 ** 20)
    x = (torch.rand(1 << 18) * 100).to(dtype)  # uncapped, a run of 1 would be ~1.6e6
    (b,) = stress_inputs([x], "spikes", torch.device("cpu"))
    assert b.dtype == dtype and bool(torch.isfinite(b).all())
    assert float(b.abs().max()) <= cap * 1.01 and float(b.abs().max()) > float(x.abs().max())
    if dtype == torch.float16:
        assert bool(torch.isfinite(b.float() ** 2).all()) and bool(torch.isfinite(b * b).all())
    big = torch.full((1024,), 2.0 * cap, dtype=dtype)  # above the cap already: not scaled
    assert torch.equal(stress_inputs([big], "spikes", torch.device("cpu"))[0], big)


def _probe(a):
    """A candidate's cheap look at its input: 256 strided values' range and mean magnitude."""
    v = a.reshape(-1)[:: a.numel() // 256].abs()
    return bool(((v > 0) & (v < 1)).all()), float(v.mean())


def test_a_strided_probe_takes_spikes_for_the_problems_own_values():
    # What a 256-value probe sees of a 2^20-element rand tensor is the original's in about
    # 98 % of the draws (runs of 1-16 elements cover ~90 of 2^20 positions); blocks change
    # every probed value (mean magnitude ~0 against 0.5).
    x = torch.rand(1 << 20)
    in_range, mean = _probe(x)
    same = 0
    for _ in range(200):
        (b,) = stress_inputs([x], "spikes", torch.device("cpu"))
        r, m = _probe(b)
        same += r == in_range and abs(m - mean) < 1e-6
    assert same >= 180, same
    (b,) = stress_inputs([x], "blocks", torch.device("cpu"))
    assert _probe(b)[1] < 0.01


def test_a_sampled_reduction_passes_the_problems_values_and_fails_spikes():
    def every_8th(x):
        return x[::8].sum() * 8

    def every_8th_block(x):
        return x.reshape(-1, 256)[::8].sum() * 8

    def sampled_mse(p, t):
        return ((p.reshape(-1, 256)[::8] - t.reshape(-1, 256)[::8]) ** 2).mean()

    x, y = torch.rand(1 << 18), torch.rand(1 << 18)
    for f in (every_8th, every_8th_block):
        assert normwise_error(f(x), x.sum(), 1e-2, 1e-2)[0]
    assert normwise_error(sampled_mse(x, y), ((x - y) ** 2).mean(), 1e-2, 1e-2)[0]
    # one draw lets these samplers through 1-5 % of the time (stress.py's docstring): three
    # draws all do at most about 1e-4 of the time
    draws = [stress_inputs([x, y], "spikes", torch.device("cpu")) for _ in range(3)]
    for f in (every_8th, every_8th_block):
        assert not all(normwise_error(f(b), b.sum(), 1e-2, 1e-2)[0] for b, _ in draws)
    assert not all(normwise_error(sampled_mse(b, c), ((b - c) ** 2).mean(), 1e-2, 1e-2)[0]
                   for b, c in draws)


def test_the_timed_error_budget_is_not_the_candidates_to_raise():
    from kernelsmith_worker.stress import timed_error_limit

    # an exact MSE whose answer is scaled by 1 + 3e-3 would allow 1.2e-2 while timed; the
    # reference's own error on bf16-rounded inputs caps what the trials may buy
    assert timed_error_limit(3e-3, None) == pytest.approx(1.2e-2)
    assert timed_error_limit(3e-3, 1e-5) == pytest.approx(1e-3)  # the floor
    assert timed_error_limit(1e-3, 2e-3) == pytest.approx(4e-3)  # TF32-like: the trials'
    assert timed_error_limit(5e-3, 4e-3) == pytest.approx(1.6e-2)  # bf16 compute: rounding's


def test_the_rounding_error_is_measured_before_the_candidate_on_trial_0():
    import types
    from kernelsmith_worker.inputs import InputCache
    from kernelsmith_worker.trials import Trials

    class Mse(torch.nn.Module):
        def forward(self, a, b):
            return ((a - b) ** 2).mean()

    class Ids(torch.nn.Module):
        def forward(self, ids):
            return torch.bincount(ids, minlength=8).float()

    def trials(model, get_inputs):
        problem = types.SimpleNamespace(sha256=str(id(model)), path="p.py", get_inputs=get_inputs)
        t = Trials(problem, model, 1, torch.device("cpu"), InputCache(), 1 << 24)
        t.prepare(2)
        return t.rounding_err

    err = trials(Mse(), lambda: [torch.rand(4096), torch.rand(4096)])
    assert err is not None and 0 < err < 1e-3  # rounding averages out in a mean
    assert trials(Ids(), lambda: [torch.randint(0, 8, (64,))]) is None  # no float input


def test_normwise_figures_are_the_same_in_chunks_as_whole(monkeypatch):
    from kernelsmith_worker import stress

    gen = torch.Generator().manual_seed(3)
    ref = torch.randn(10_000, generator=gen)
    ref[[5, 4097, 9_999]] = math.inf
    ref[77] = math.nan
    out = ref + 1e-3 * torch.randn(10_000, generator=gen)
    whole = stress._error_and_norm(out, ref)
    monkeypatch.setattr(stress, "NORM_CHUNK", 1000)
    chunked = stress._error_and_norm(out, ref)
    assert whole is not None and chunked is not None
    assert chunked[2] == whole[2] == 10_000 - 4
    assert chunked[0] == pytest.approx(whole[0], rel=1e-12)
    assert chunked[1] == pytest.approx(whole[1], rel=1e-12)
    fin = torch.isfinite(ref)
    assert whole[0] == pytest.approx(float((out[fin] - ref[fin]).double().norm()), rel=1e-12)
    bad = out.clone()
    bad[9_000] = math.nan  # a finite position of the reference, in the last chunk
    assert stress._error_and_norm(bad, ref) is None
