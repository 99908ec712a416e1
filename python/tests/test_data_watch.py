"""data_watch: the worker's data compared by value (defaults, class flags, floats overwritten
in place), through the integrity guard."""

from __future__ import annotations

import ctypes
import dataclasses
import sys

from kernelsmith_worker import correctness, timed_inputs, timing
from kernelsmith_worker.integrity import IntegrityGuard
from kernelsmith_worker.timing_policy import TimingConfig


def test_kwdefaults_and_class_flags_are_seen_and_put_back():
    guard = IntegrityGuard()
    assert guard.changes() == []
    kw = timing.time_pair.__kwdefaults__
    had_kw = None if kw is None else dict(kw)
    timing.time_pair.__kwdefaults__ = {**(kw or {}), "config": TimingConfig(timed_checks=0)}
    timed_inputs.RotatingInputs.checked = False
    try:
        found = guard.changes()
        assert any("time_pair's default arguments changed" in f for f in found), found
        assert any("RotatingInputs.checked changed value" in f for f in found), found
    finally:
        assert guard.restore() == []
    assert timed_inputs.RotatingInputs.checked is True
    assert timing.time_pair.__kwdefaults__ == had_kw
    assert guard.changes() == []


def test_a_float_overwritten_in_place_is_seen_and_not_taken_for_restored():
    table = correctness.TOLERANCES
    original = table["default"]
    # a private float object with the tolerance's value, overwritten in place below: the
    # shared constant itself is left alone (other tests use it)
    mine = float(repr(original.atol))
    assert mine is not original.atol
    table["default"] = dataclasses.replace(original, atol=mine)
    try:
        guard = IntegrityGuard()  # the snapshot holds `mine`
        assert guard.changes() == []
        value_offset = sys.getsizeof(0.0) - 8  # ob_fval sits after the object header
        ctypes.c_double.from_address(id(mine) + value_offset).value = 0.25
        assert mine == 0.25 and table["default"].atol == 0.25
        found = guard.changes()
        assert any("TOLERANCES changed value" in f for f in found), found
        failed = guard.restore()
        assert any("overwritten in place" in f for f in failed), failed  # replace the worker
    finally:
        table["default"] = original
