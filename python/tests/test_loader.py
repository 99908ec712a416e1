"""Loading problems and candidates: errors name the user's file, the line and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelsmith_worker.loader import LoadError, ModuleLoader

PROBLEM = """import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x + 1
def get_inputs():
    return [torch.rand(4)]
def get_init_inputs():
    return []
"""


def test_problem_syntax_error_names_the_file_line_and_text(tmp_path: Path) -> None:
    loader = ModuleLoader(tmp_path)
    broken = PROBLEM.replace("return x + 1", "return x +* 1")
    with pytest.raises(LoadError) as info:
        loader.load_problem("suites/my/level1/7_Add.py", broken)
    e = info.value
    assert e.status == "infra_error"
    assert e.message.startswith("problem suites/my/level1/7_Add.py, line 4, column ")
    assert "SyntaxError: invalid syntax: `return x +* 1`" in e.message
    assert e.message.endswith("fix the Python syntax at line 4 of suites/my/level1/7_Add.py")
    loader.cleanup()


def test_problem_indentation_error_and_missing_names(tmp_path: Path) -> None:
    loader = ModuleLoader(tmp_path)
    with pytest.raises(LoadError, match=r"problem p.py, line 3.*IndentationError"):
        loader.load_problem("p.py", "import torch\nclass Model:\npass\n")
    with pytest.raises(LoadError, match=r"problem p.py does not define get_inputs, get_init_inputs"):
        loader.load_problem("p.py", "class Model:\n    pass\n")
    assert loader.load_problem("p.py", PROBLEM).Model is not None
    loader.cleanup()


def test_candidate_syntax_error_is_a_compile_error_naming_the_line(tmp_path: Path) -> None:
    loader = ModuleLoader(tmp_path)
    with pytest.raises(LoadError) as info:
        loader.load_candidate("cand.py", "import torch\n\nclass ModelNew(torch.nn.Module:\n    pass\n")
    assert info.value.status == "compile_error"
    assert info.value.message.startswith("candidate cand.py, line 3")
    assert "SyntaxError" in info.value.log_tail
    # Other import failures keep the general message.
    with pytest.raises(LoadError, match="candidate does not import: NameError"):
        loader.load_candidate("cand.py", "undefined_name\n")
    loader.cleanup()
