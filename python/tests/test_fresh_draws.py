"""Fresh get_inputs() draws as the timed slots' bases (fresh_draws.py, timed_inputs.py)."""

import torch

from kernelsmith_worker import fresh_draws
from kernelsmith_worker.timed_inputs import RotatingInputs

CPU = torch.device("cpu")


def _block_sparse_mask():
    """A problem's get_inputs(): random zero blocks, a boolean mask of random row lengths,
    an additive -inf mask, unsorted ids, sorted offsets and a non-tensor argument."""
    keep = (torch.rand(16) < 0.3).float().repeat_interleave(4)
    x = torch.randn(8, 64) * keep[None, :]
    lengths = torch.randint(1, 65, (8,))
    mask = torch.arange(64)[None, :] < lengths[:, None]
    add = torch.zeros(8, 64).masked_fill(~mask, float("-inf"))
    ids = torch.randint(0, 50, (40,))
    offsets = torch.sort(torch.randint(0, 100, (9,))).values
    return [x, mask, add, ids, offsets, 3]


def _structure(args):
    x, mask, add, ids, offsets, _ = args
    return ((x != 0).clone(), mask.clone(), torch.isinf(add).clone(),
            torch.bincount(ids, minlength=50).clone(), offsets.clone())


def _timed_structures(rot, refreshes, signed=False):
    seen = []
    for _ in range(refreshes):
        rot.refresh(signed=signed)
        seen += [_structure(rot.args(j)) for j in range(rot.slots)]
    return seen


def _distinct(seen, i):
    return len({s[i].numpy().tobytes() for s in seen})


def test_timed_slots_do_not_share_trial_0s_structure():
    torch.manual_seed(0)
    base = _block_sparse_mask()
    draws, finding = fresh_draws.draw(_block_sparse_mask, base, CPU, 1 << 20)
    assert finding is None and len(draws) == fresh_draws.MAX_DRAWS
    rot = RotatingInputs(base, CPU, 1 << 20, lambda c, r: True, draws=draws)
    assert rot.use(4) == 4
    seen = _timed_structures(rot, 6) + _timed_structures(rot, 2, signed=True)
    # zero blocks, mask row lengths, -inf positions, the ids' histogram and the offsets all
    # vary between timed samples; each structure but the ids' is one of a draw's (the
    # problem's distribution), and the ids are resampled from a draw's values (a histogram
    # no draw had)
    for i in range(5):
        assert _distinct(seen, i) >= 3, i
    drawn = [_structure(d) for d in draws]
    kept = (0, 1, 2, 4)
    for s in seen:
        assert any(all(torch.equal(s[i], d[i]) for i in kept) for d in drawn)
        assert not any(torch.equal(s[3], d[3]) for d in drawn)
        assert not all(torch.equal(a, b) for a, b in zip(s, _structure(base)))
    # the floats are mixed with a second draw: never one draw's own values
    x = rot.args(0)[0]
    assert not any(torch.equal(x, d[0]) for d in draws)
    assert rot.tampered() is None


def test_without_draws_the_timed_slots_keep_trial_0s_structure():
    torch.manual_seed(1)
    base = _block_sparse_mask()
    rot = RotatingInputs(base, CPU, 1 << 20, lambda c, r: True)
    rot.use(4)
    seen = _timed_structures(rot, 3)
    assert all(_distinct(seen, i) == 1 for i in (0, 1, 2, 4))
    assert _distinct(seen, 3) > 1  # ids that repeat values are resampled from trial 0's


def test_draws_are_not_seeded_from_the_global_generator_and_leave_it_as_it_was():
    torch.manual_seed(7)
    base = _block_sparse_mask()
    torch.manual_seed(7)
    before = torch.get_rng_state()
    a, _ = fresh_draws.draw(_block_sparse_mask, base, CPU, 1 << 20)
    assert torch.equal(torch.get_rng_state(), before)
    torch.manual_seed(7)
    b, _ = fresh_draws.draw(_block_sparse_mask, base, CPU, 1 << 20)
    assert not torch.equal(a[0][0], b[0][0])
    assert all(not torch.equal(d[0], base[0]) for d in a)


def test_too_few_draws_fall_back_to_trial_0_with_an_info_finding():
    base = _block_sparse_mask()
    draws, finding = fresh_draws.draw(_block_sparse_mask, base, CPU, 100)
    assert draws == [] and finding["severity"] == "info" and "budget" in finding["detail"]

    sizes = iter(range(1, 100))

    def varying():
        return [torch.rand(next(sizes))]

    draws, finding = fresh_draws.draw(varying, [torch.rand(5)], CPU, 1 << 20)
    assert draws == [] and "shapes" in finding["detail"]

    def raising():
        raise ValueError("no")

    draws, finding = fresh_draws.draw(raising, [torch.rand(5)], CPU, 1 << 20)
    assert draws == [] and "ValueError" in finding["detail"]


def test_draws_all_alike_are_no_draws():
    fixed = [torch.arange(8.0), torch.tensor([3, 1, 2])]
    draws, finding = fresh_draws.draw(lambda: [t.clone() for t in fixed], fixed, CPU, 1 << 20)
    assert draws == [] and finding["kind"] == fresh_draws.KIND
    assert "same values" in finding["detail"]


def test_draws_are_bounded_by_the_budget():
    base = [torch.rand(256)]  # 1 KiB
    draws, finding = fresh_draws.draw(lambda: [torch.rand(256)], base, CPU, 5 * 1024 + 10)
    assert finding is None and len(draws) == 5


def _cpu_timing(cand, draws=True, samples=40):
    """time_pair on the CPU over RotatingInputs of a boolean-mask problem; the reference is
    the masked row count, `cand(mask)` the candidate."""
    def get_inputs():
        lengths = torch.randint(1, 65, (16,))
        return [torch.arange(64)[None, :] < lengths[:, None]]

    torch.manual_seed(3)
    base = get_inputs()
    fresh = fresh_draws.draw(get_inputs, base, CPU, 1 << 20)[0] if draws else None
    rot = RotatingInputs(base, CPU, 1 << 20, lambda c, r: torch.equal(c, r), draws=fresh)
    return cpu_timing(rot, lambda j: rot.ref_args(j)[0].sum(1), lambda j: cand(rot.args(j)[0]),
                      samples)


def cpu_timing(rot, ref, cand, samples=40):
    """time_pair on the CPU over `rot`, with few short samples."""
    from kernelsmith_worker import timing
    from kernelsmith_worker.timing_policy import TimingConfig

    cfg = TimingConfig(cpu_warmup_calls=2, cpu_warmup_min_s=0.0, cpu_warmup_max_s=0.05,
                       min_samples=samples, max_samples=samples, floor_samples=samples,
                       sample_budget_s=0.01, n_boot=50)
    return timing.time_pair(ref, cand, device=CPU, seed=0, inputs=rot, config=cfg)


def _kinds(rec):
    return {f["kind"] for f in rec.get("findings") or []}


def test_cpu_timing_checks_samples_on_fresh_draws_and_catches_a_memo():
    kept = []

    def memo(mask):  # the first answer, kept: exact while the mask is trial 0's
        if not kept:
            kept.append(mask.sum(1))
        return kept[0].clone()

    rec = _cpu_timing(memo)
    assert rec["ok"] and rec["timed_checks"] > 0
    assert "timed_output_mismatch" in _kinds(rec)
    kept.clear()
    rec = _cpu_timing(memo, draws=False)  # trial 0's mask in every slot: the memo passed
    assert rec["timed_checks"] > 0 and "timed_output_mismatch" not in _kinds(rec)
    rec = _cpu_timing(lambda mask: mask.sum(1))
    assert rec["timed_checks"] > 0 and not _kinds(rec) & {"timed_output_mismatch",
                                                           "timed_input_modified"}


def test_cpu_timing_sees_a_written_input():
    def writes(mask):
        mask[0, 0] = not bool(mask[0, 0])
        return mask.sum(1)

    assert "timed_input_modified" in _kinds(_cpu_timing(writes))


def test_trials_draw_fresh_keeps_draws_on_the_host_and_says_why_there_are_none():
    import types
    from kernelsmith_worker.inputs import InputCache
    from kernelsmith_worker.trials import Trials

    problem = types.SimpleNamespace(sha256="fd", path="p.py", get_inputs=_block_sparse_mask)
    trials = Trials(problem, torch.nn.Identity(), 1, CPU, InputCache(), 1 << 20)
    trials.draw_fresh()
    assert trials.fresh_finding is None and len(trials.fresh) >= fresh_draws.MIN_DRAWS
    assert all(t.device.type == "cpu" for d in trials.fresh for t in d if torch.is_tensor(t))
    sizes = iter(range(1, 1000))
    problem = types.SimpleNamespace(sha256="fd2", path="q.py",
                                    get_inputs=lambda: [torch.rand(next(sizes))])
    trials = Trials(problem, torch.nn.Identity(), 1, CPU, InputCache(), 1 << 20)
    trials.draw_fresh()
    assert trials.fresh == [] and trials.fresh_finding["kind"] == fresh_draws.KIND


def _rand_problem():
    return [torch.rand(64, 128), torch.randn(64, 128), torch.randint(0, 20, (512,))]


def test_refreshed_values_are_the_problems_distribution_and_new_every_time():
    # A candidate that probes mean |x| or the largest value must not tell a timed slot from
    # a trial: the refreshed values are draws' values at their own positions, never
    # shrunk, and still a pattern no draw had. Ids that repeat values get a new multiset.
    torch.manual_seed(3)
    base = _rand_problem()
    draws, finding = fresh_draws.draw(_rand_problem, base, CPU, 1 << 22)
    assert finding is None and len(draws) >= 2
    rot = RotatingInputs(base, CPU, 1 << 22, lambda c, r: True, draws=draws)
    rot.use(4)
    hists = set()
    for _ in range(5):
        rot.refresh()
        for j in range(rot.slots):
            u, n, ids = rot.args(j)
            assert 0 <= float(u.min()) and float(u.max()) < 1
            assert abs(float(u.abs().mean()) - 0.5) < 0.02  # shrunk values gave <= 0.44
            assert abs(float(n.abs().mean()) - 0.798) < 0.04  # E|N(0,1)|
            assert not any(torch.equal(u, d[0]) or torch.equal(n, d[1]) for d in draws)
            hists.add(torch.bincount(ids, minlength=20).numpy().tobytes())
    assert len(hists) == 5 * rot.slots  # a new multiset of ids in every slot and refresh


def test_cpu_timing_never_leaves_a_run_unchecked():
    # five samples only: with a 1/4 chance per sample a run went unchecked one time in four;
    # two checks are planned among the first five, so a kernel wrong on every timed call is
    # always caught
    torch.manual_seed(4)
    base = _rand_problem()
    draws, _ = fresh_draws.draw(_rand_problem, base, CPU, 1 << 22)
    for _ in range(8):
        rot = RotatingInputs(base, CPU, 1 << 22, lambda c, r: torch.allclose(c, r), draws=draws)
        rec = cpu_timing(rot, lambda j: rot.ref_args(j)[0] * 2,
                         lambda j: rot.args(j)[0] * 2.5, samples=5)
        assert rec["timed_checks"] >= 1 and "timed_output_mismatch" in _kinds(rec), rec
