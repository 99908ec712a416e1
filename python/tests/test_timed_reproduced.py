"""A timed call's output against the candidate called again outside the timing on the same
values (timed_inputs.self_gap, RotatingInputs.reproduced, timing_blocks.check_sample)."""

import math

import pytest
import torch

from kernelsmith_worker.timed_inputs import HELD_SHARE, RotatingInputs, self_gap
from test_fresh_draws import CPU, cpu_timing


def test_self_gap_allows_rounding_order_and_nothing_more():
    b = torch.rand(4096) + 0.5
    assert self_gap(b.clone(), b) == 0.0
    assert self_gap(b * (1 + 1e-7), b) < 1  # float32 rounding order
    assert self_gap(b * (1 + 2.5e-3), b) > 10  # an inflated or approximate answer
    half = b.half()
    assert self_gap(half * (1 + 2e-3), half) < 1  # within 4 eps of float16
    nan = b.clone()
    nan[3] = float("nan")
    assert self_gap(nan.clone(), nan) == 0.0 and self_gap(b, nan) == math.inf
    ids = torch.arange(5)
    assert self_gap(ids.clone(), ids) == 0.0 and self_gap(ids + 1, ids) == math.inf
    assert self_gap((b, 3), (b, 3)) == 0.0 and self_gap((b, 3), (b, 4)) == math.inf
    assert self_gap(b[:5], b) == math.inf


def test_reproduced_takes_the_candidates_own_run_to_run_noise():
    rot = RotatingInputs([torch.rand(8)], CPU, 1 << 20, lambda c, r: True)
    b = torch.rand(1000) + 1
    assert rot.reproduced(b * (1 + 1e-3), b, lambda: b.clone()) is False  # deterministic
    noisy = iter([b * (1 + 6e-4)])
    assert rot.reproduced(b * (1 + 8e-4), b, lambda: next(noisy)) is True  # atomics-like
    # a candidate that jitters by 2.5e-3 a call does not widen the check past REPRODUCE_MAX
    # (1e-3 relative): a timed call 3e-3 off is not reproduced
    jitter = iter([b * (1 - 2.5e-3)])
    assert rot.reproduced(b * (1 + 3e-3), b, lambda: next(jitter)) is False


def test_the_candidate_gets_new_tensor_objects_every_sample():
    rot = RotatingInputs([torch.rand(64)], CPU, 1 << 20, lambda c, r: True)
    rot.use(2)
    seen = []
    for _ in range(3):
        rot.refresh()
        x = rot.args(0)[0]
        assert all(x is not y for y in seen)
        assert x.data_ptr() == rot.ref_args(0)[0].data_ptr() and x is not rot.ref_args(0)[0]
        seen.append(x)


def test_timed_inputs_and_check_copies_carry_a_clones_version_counter():
    # a trial's input is a clone (version 0): a timed slot (made by set_, refreshed in place)
    # or a check's copy (made by copy_) with another version would tell the call apart
    rot = RotatingInputs([torch.rand(64, 8)], CPU, 1 << 20, lambda c, r: True)
    rot.use(3)
    for _ in range(3):
        rot.refresh()
        assert all(rot.args(j)[0]._version == 0 for j in range(3))
        with rot.pristine():
            assert rot.args(0)[0]._version == 0
    assert torch.rand(4).clone()._version == 0


def _mse_problem():
    base = [torch.rand(64, 256), torch.rand(64, 256)]
    rot = RotatingInputs(base, CPU, 1 << 24, lambda c, r: bool(torch.allclose(c, r, 1e-2, 1e-2)))

    def ref(j):
        a, b = rot.ref_args(j)
        return ((a - b) ** 2).mean()
    return rot, ref


def test_a_candidate_that_computes_less_only_while_timed_is_caught():
    rot, ref = _mse_problem()

    def timed(x):  # tells a timed call by its input's memory: the evaluator's slots
        return any(x.data_ptr() == s[0].data_ptr() for s in rot._args)

    def cand(j):
        a, b = rot.args(j)
        exact = ((a - b) ** 2).mean()
        return exact * (1 + 3e-3) if timed(a) else exact  # within the tolerance of 1e-2

    rec = cpu_timing(rot, ref, cand, samples=60)
    kinds = {f["kind"] for f in rec["findings"]}
    assert rec["timed_checks"] > 0 and "timed_output_unreproduced" in kinds, rec["findings"]
    assert "timed_output_mismatch" not in kinds  # the reference alone would not see it

    rot, ref = _mse_problem()
    rec = cpu_timing(rot, ref, lambda j: ((rot.args(j)[0] - rot.args(j)[1]) ** 2).mean(),
                     samples=60)
    assert rec["timed_checks"] > 0
    assert not {f["kind"] for f in rec["findings"]} & {"timed_output_unreproduced",
                                                        "timed_output_mismatch"}


_DEVICES = [CPU] + ([torch.device("cuda")] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("dev", _DEVICES, ids=str)
def test_check_copies_do_not_sit_at_repeating_addresses(dev):
    # 16 KiB (the host's heap), 8 MiB (its own mmap on the host, which the next one would get
    # back) and 64 MiB (a large block of CUDA's caching allocator, handed back alike)
    for numel in (4096, 2 << 20) + ((16 << 20,) if dev.type == "cuda" else ()):
        rot = RotatingInputs([torch.rand(numel, device=dev)], dev, 4 << 30 if dev.type == "cuda"
                             else 1 << 29, lambda c, r: True)
        rot.use(2)
        rot.refresh()
        seen = set()
        for _ in range(16):
            with rot.pristine():
                x = rot.args(0)[0]
                assert torch.equal(x, rot.ref_args(0)[0])
                assert x.data_ptr() != rot._args[0][0].data_ptr()
                seen.add(x.data_ptr())
            del x
        assert len(seen) == 16, numel


def test_held_check_copies_stay_within_their_share_of_the_budget():
    rot = RotatingInputs([torch.rand(1 << 16)], CPU, 1 << 21, lambda c, r: True)  # 256 KiB
    rot.use(2)
    rot.refresh()
    for _ in range(32):
        with rot.pristine():
            rot.args(0), rot.ref_args(0)
    assert 0 < rot._held_bytes <= (1 << 21) // HELD_SHARE
