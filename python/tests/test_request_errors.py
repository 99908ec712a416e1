"""Request validation and exception classification."""

from __future__ import annotations

import pytest

from kernelsmith_worker import errors
from kernelsmith_worker.cpu_ext import CompileError
from kernelsmith_worker.request import EvalRequest

BASE = {"type": "eval", "id": "9", "backend": "cpu",
        "problem": {"path": "p.py", "source": "x = 1"},
        "candidate": {"path": "c.py", "source": "y = 2"}}


def test_defaults_and_fields():
    req = EvalRequest.from_message(BASE)
    assert (req.id, req.backend, req.trials, req.tolerance, req.seed, req.timing) == \
        ("9", "cpu", 5, "default", 42, True)
    assert req.problem_source == "x = 1" and req.candidate_path == "c.py"
    assert req.baseline_path is None and req.baseline_source is None
    req = EvalRequest.from_message({**BASE, "baseline": {"path": "best.py", "source": "z = 3"}})
    assert (req.baseline_path, req.baseline_source) == ("best.py", "z = 3")


@pytest.mark.parametrize("patch, field", [
    ({"backend": ""}, "backend"), ({"trials": 0}, "trials"), ({"trials": True}, "trials"),
    ({"tolerance": "loose"}, "tolerance"), ({"seed": "1"}, "seed"), ({"timing": 1}, "timing"),
    ({"problem": "p.py"}, "problem"), ({"candidate": {"path": ""}}, "candidate"),
    ({"baseline": "best.py"}, "baseline"),
    ({"baseline": {"path": "b.py", "source": "z"}, "timing": False}, "baseline"),
])
def test_invalid_fields_are_named(patch, field):
    with pytest.raises(ValueError, match=field):
        EvalRequest.from_message({**BASE, **patch})


def test_classification():
    cuda = RuntimeError("CUDA error: an illegal memory access was encountered")
    assert errors.is_cuda_poison(cuda)
    wrapped = ValueError("outer")
    wrapped.__cause__ = RuntimeError("device-side assert triggered")
    assert errors.is_cuda_poison(wrapped)
    assert not errors.is_cuda_poison(ValueError("shape mismatch"))
    assert errors.is_compile_failure(CompileError("nope", "log"))
    assert errors.is_compile_failure(RuntimeError("Error building extension 'x'"))
    assert not errors.is_compile_failure(RuntimeError("boom"))
    assert errors.log_tail(CompileError("nope", "the compiler said no")) == "the compiler said no"
    assert errors.describe(ValueError("a\n  b")) == "ValueError: a b"
    assert len(errors.describe(ValueError("x" * 2000))) == errors.MESSAGE_CHARS
