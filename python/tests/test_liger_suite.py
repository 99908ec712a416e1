"""suites/liger: liger-kernel's Triton kernels as reference models at LLM shapes. Their kernels
need a GPU (liger's scalar arguments do not run in Triton's interpreter); here each problem is
loaded as the worker loads it and its declared cases are read and sized on the meta device."""

from __future__ import annotations

import re

import pytest
import torch

from conftest import REPO
from kernelsmith_worker.cases import input_cases
from kernelsmith_worker.inputs import planned_input_bytes

SUITE = REPO / "suites" / "liger"
PROBLEMS = sorted(p for p in SUITE.glob("*.py") if p.name.count(".") == 1)


def test_suite_has_at_least_four_problems_each_with_its_seed():
    assert len(PROBLEMS) >= 4
    for p in PROBLEMS:
        seed = p.with_suffix(".triton.py")
        text = seed.read_text()
        assert "class ModelNew" in text and re.search(r"# ks:tune \w+=\[", text), seed
        assert "BSD 2-Clause" in text  # the copied kernel keeps its license notice


@pytest.mark.parametrize("path", PROBLEMS, ids=lambda p: p.stem)
def test_problem_declares_llm_shapes(worker_ctx, path):
    problem = worker_ctx.loader.load_problem(str(path), None)
    try:
        cases = input_cases(problem)
        assert cases is not None
        names = [c.name for c in cases]
        assert "decode 1" in names and "decode 256" in names and "prefill 4096" in names
        sizes = [planned_input_bytes(c.problem.get_inputs) for c in cases]
        assert all(s is not None and s > 0 for s in sizes)
        assert sizes == sorted(sizes)  # decode 1 smallest, prefill largest
        assert sizes[-1] < 1 << 30  # fits beside the worker's input cache on any GPU
        with torch.device("meta"):
            model = problem.Model(*problem.get_init_inputs())
        assert all(p.dtype == torch.bfloat16 for p in model.parameters())
    finally:
        worker_ctx.loader.cleanup()
