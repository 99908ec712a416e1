"""A slot's tensors from independently picked fresh draws (fresh_draws.mixed,
RotatingInputs(mixed=True), Trials.draw_fresh's check of the reference on a mix)."""

import types

import torch

from kernelsmith_worker import fresh_draws
from kernelsmith_worker.inputs import InputCache
from kernelsmith_worker.timed_inputs import RotatingInputs
from kernelsmith_worker.trials import Trials
from test_fresh_draws import CPU, cpu_timing

V = 16


def _zeros_and_ids():
    """Floats with zeros at random positions (a refresh keeps them: they name the draw) and
    unsorted distinct ids (a refresh permutes them: their counts are the draw's; ids that
    repeat would be resampled, a new multiset each refresh)."""
    x = torch.rand(64) * (torch.rand(64) < 0.5)
    return [x, torch.randperm(V)[:12]]


def _reference(x, ids):
    return x - 0.5 * torch.bincount(ids, minlength=V).float().repeat(4)


def _memo():
    """Counts served from a memo keyed on x's zero pattern: exact while a slot's ids always
    come from the draw its x came from."""
    kept = {}

    def cand(x, ids):
        key = (x != 0).numpy().tobytes()
        if key not in kept:
            kept[key] = torch.bincount(ids, minlength=V).float().repeat(4)
        return x - 0.5 * kept[key]
    return cand


def _draws():
    torch.manual_seed(5)
    base = _zeros_and_ids()
    draws, finding = fresh_draws.draw(_zeros_and_ids, base, CPU, 1 << 20)
    assert finding is None and len(draws) >= 4
    return base, draws


def test_mixed_slots_hold_combinations_no_draw_made():
    base, draws = _draws()
    rot = RotatingInputs(base, CPU, 1 << 20, lambda c, r: True, draws=draws, mixed=True)
    assert rot.mixed and rot.use(8) == 8
    zeros = [(d[0] != 0) for d in draws]
    counts = [torch.bincount(d[1], minlength=V) for d in draws]
    pairs = set()
    for _ in range(6):
        rot.refresh()
        for j in range(rot.slots):
            x, ids = rot.args(j)
            zx = [i for i, z in enumerate(zeros) if torch.equal(z, x != 0)]
            hist = torch.bincount(ids, minlength=V)
            ci = [i for i, c in enumerate(counts) if torch.equal(c, hist)]
            assert zx and ci  # each tensor is one draw's, refreshed
            pairs.add((zx[0], ci[0]))
    assert any(a != b for a, b in pairs)
    assert rot.tampered() is None


def test_fresh_draws_mixed_takes_tensor_i_from_draw_i_mod_d():
    base, draws = _draws()
    mix = fresh_draws.mixed(draws, base)
    assert torch.equal(mix[0], draws[0][0]) and torch.equal(mix[1], draws[1][1])


def test_a_memo_keyed_on_one_tensor_is_caught_only_when_slots_mix_draws():
    base, draws = _draws()
    for mixed, caught in ((False, False), (True, True)):
        kinds = _kinds(base, draws, _memo(), mixed)
        assert ("timed_output_mismatch" in kinds) is caught, (mixed, kinds)
    assert not _kinds(base, draws, _reference, True) & {"timed_output_mismatch",
                                                         "timed_input_modified"}


def _kinds(base, draws, cand, mixed):
    rot = RotatingInputs(base, CPU, 1 << 20, lambda c, r: torch.equal(c, r), draws=draws,
                         mixed=mixed)
    rec = cpu_timing(rot, lambda j: _reference(*rot.ref_args(j)), lambda j: cand(*rot.args(j)))
    assert rec["timed_checks"] > 0
    return {f["kind"] for f in rec.get("findings") or []}


class _Lengths(torch.nn.Module):
    """Splits x by lengths that must sum to its size: every draw's lengths do."""

    def forward(self, x, lengths):
        return torch.stack([p.sum() for p in torch.split(x, lengths.tolist())])


def _split_inputs():
    cut = torch.sort(torch.randperm(63)[:7] + 1).values
    lengths = torch.diff(torch.cat([torch.tensor([0]), cut, torch.tensor([64])]))
    return [torch.rand(64), lengths[torch.randperm(8)]]


class _Total(torch.nn.Module):
    """The second input must be the first one's sum: tensors tied to each other's values."""

    def forward(self, x, total):
        if abs(float(x.sum() - total[0])) > 1e-4:
            raise ValueError("total does not match x")
        return x / total


def _with_total():
    x = torch.rand(8)
    return [x, x.sum().reshape(1)]


def _log_gap():
    x = torch.rand(256) + 1
    return [x, x * torch.rand(256)]  # below x in every draw: log(x - y) is finite


def _trials(get_inputs, ref):
    problem = types.SimpleNamespace(sha256=get_inputs.__name__, path="p.py",
                                    get_inputs=get_inputs)
    trials = Trials(problem, ref, 1, CPU, InputCache(), 1 << 20)
    trials.draw_fresh()
    assert len(trials.fresh) >= fresh_draws.MIN_DRAWS
    return trials


def test_draw_fresh_mixes_only_where_the_reference_takes_a_mix():
    assert _trials(_zeros_and_ids, _reference).fresh_mixed
    assert _trials(_split_inputs, _Lengths()).fresh_mixed  # any draw's lengths sum to 64
    assert not _trials(_with_total, _Total()).fresh_mixed  # raises on a mix
    assert not _trials(_log_gap, lambda x, y: torch.log(x - y)).fresh_mixed  # NaN on a mix
    one = _trials(lambda: [torch.rand(8)], lambda x: x * 2)
    assert not one.fresh_mixed  # a single tensor: nothing to mix
