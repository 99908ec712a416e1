"""Output comparison and input checks."""

from __future__ import annotations

import math

import pytest
import torch

from kernelsmith_worker.correctness import (TOLERANCES, bitwise_equal, compare_outputs,
                                            modified_input)

DEFAULT = TOLERANCES["default"]
STRICT = TOLERANCES["strict"]


def test_close_values_pass_and_report_errors():
    ref = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    c = compare_outputs(ref + 0.005, ref, DEFAULT)
    assert c.ok and c.max_abs_err == pytest.approx(0.005, abs=1e-6)
    assert c.max_rel_err == pytest.approx(0.005, abs=1e-6)  # at ref = 1
    assert not compare_outputs(ref + 0.005, ref, STRICT).ok


def test_first_mismatch_index_and_values():
    ref = torch.zeros(3, 4)
    out = ref.clone()
    out[1, 2] = 5.0
    out[2, 0] = 7.0
    c = compare_outputs(out, ref, DEFAULT)
    assert not c.ok and c.check == "values"
    assert c.index == [1, 2] and c.expected == 0.0 and c.actual == 5.0
    assert c.mismatches == 2 and c.max_abs_err == 7.0
    assert "index [1, 2]" in c.message and "2 of 12 elements differ" in c.message


def test_nan_where_reference_is_finite_is_a_mismatch():
    ref = torch.ones(4)
    out = ref.clone()
    out[3] = float("nan")
    c = compare_outputs(out, ref, DEFAULT)
    assert not c.ok and c.index == [3] and c.nonfinite_mismatches == 1
    assert math.isnan(c.actual)
    assert math.isfinite(c.max_abs_err)
    both = torch.tensor([1.0, float("nan"), float("inf")])
    assert compare_outputs(both.clone(), both, DEFAULT).ok


def test_structural_checks():
    ref = torch.zeros(2, 3)

    class Sub(torch.Tensor):
        pass

    assert compare_outputs(ref.clone().as_subclass(Sub), ref, DEFAULT).check == "dense_output"
    assert "not a torch.Tensor" in compare_outputs([1, 2], ref, DEFAULT).message
    assert compare_outputs(torch.zeros(3, 2), ref, DEFAULT).check == "shape"
    assert compare_outputs(torch.zeros(2, 3, dtype=torch.float64), ref, DEFAULT).check == "dtype"
    assert compare_outputs(ref.to_sparse(), ref, DEFAULT).check == "dense_output"
    assert compare_outputs(ref.t().contiguous().t(), ref, DEFAULT).ok  # strides may differ


def test_tuple_outputs_are_compared_elementwise():
    ref = (torch.zeros(2), torch.ones(3))
    assert compare_outputs((torch.zeros(2), torch.ones(3)), ref, DEFAULT).ok
    bad = compare_outputs((torch.zeros(2), torch.zeros(3)), ref, DEFAULT)
    assert not bad.ok and bad.message.startswith("output[1]: ") and bad.index == [1, 0]
    assert compare_outputs(torch.zeros(2), ref, DEFAULT).check == "structure"
    assert compare_outputs((torch.zeros(2),), ref, DEFAULT).check == "structure"


def test_integer_outputs_compare_exactly():
    ref = torch.tensor([1, 2, 3])
    assert compare_outputs(ref.clone(), ref, DEFAULT).ok
    assert not compare_outputs(ref + 1, ref, DEFAULT).ok
    big = torch.tensor([2**40])  # compared in float64: an off-by-one index is still seen
    assert compare_outputs(big.clone(), big, STRICT).ok
    # no relative tolerance for integers: half a row summed and doubled is not "close"
    assert not compare_outputs(big + 1, big, TOLERANCES["default"]).ok
    assert not compare_outputs(torch.tensor([2**20 + 1]), torch.tensor([2**20]),
                               type(STRICT)("exact", 0.0, 0.0)).ok


def test_modified_input_and_bitwise_equal():
    a = torch.randn(4, 4)
    nan = torch.tensor([float("nan")])
    assert bitwise_equal(nan, nan.clone())  # NaN payloads compare by bytes
    assert modified_input([a, 3], [a.clone(), 3]) is None
    b = a.clone()
    b[0, 0] += 1
    assert modified_input([a.clone(), a], [a.clone(), b]) == 1
    assert modified_input([a], [a.t()]) == 0  # same bytes, different strides
    assert not bitwise_equal(torch.zeros(2), torch.zeros(2, dtype=torch.float64))


def test_tiny_outputs_scale_atol_so_partial_zero_output_fails():
    # softmax over 16384 columns: every value is near 6e-5, far below atol = 1e-2
    ref = torch.softmax(torch.rand(4, 16384), dim=1)
    partial = ref.clone()
    partial[1:] = 0.0  # computed row 0 only
    c = compare_outputs(partial, ref, DEFAULT)
    assert not c.ok and c.check == "values"
    assert "atol scaled" in c.message and c.atol_used is not None and c.atol_used < 1e-5
    honest = compare_outputs(ref * (1 + 1e-4), ref, DEFAULT)
    assert honest.ok and honest.atol_used is not None


def test_outputs_of_order_one_keep_the_profile_atol():
    ref = torch.rand(8, 8) + 0.5
    c = compare_outputs(ref + 0.005, ref, DEFAULT)
    assert c.ok and c.atol_used is None
