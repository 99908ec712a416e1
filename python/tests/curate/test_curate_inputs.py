"""inputs: deduction repairs, the execution filter, problem files (one CLI run, batched)."""

from __future__ import annotations

import json

import pytest
import torch

from kernelsmith_curate.deduce import Spec, TensorSpec, repair
from kernelsmith_curate.problem import render

from .helpers import REPO_A, REPO_B, extract, jsonl, run_cli

HEAD_SRC = ("import torch\nimport torch.nn as nn\n\nclass Head128(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(128, 10)\n\n    def forward(self, x):\n"
            "        return self.fc(x)\n")


def _candidate(rid: str, inputs: str) -> dict:
    return {"id": rid, "source": HEAD_SRC, "class": "Head128", "candidate_inputs": {
        "get_inputs": f"def get_inputs():\n    return [{inputs}]\n",
        "get_init_inputs": "def get_init_inputs():\n    return []\n"}}


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    recs = extract(REPO_A, sorted((REPO_A / "pkg").glob("*.py")))
    recs += extract(REPO_B, [REPO_B / "filtered.py"])
    lines = [{"id": r["class"], "source": r["source"], "class": r["class"],
              "candidate_inputs": None} for r in recs if r["status"] == "ok"]
    lines += [_candidate("cand_good", "torch.randn(4, 128)"),
              _candidate("cand_bad", "torch.randn(4, 7)")]
    stdin = "".join(json.dumps(x) + "\n" for x in lines)
    proc = run_cli(["inputs", "--timeout", "6", "--jobs", "2"], stdin)
    assert proc.returncode == 0, proc.stderr
    out = jsonl(proc.stdout)  # every line parses: a module printing cannot corrupt it
    assert sorted(r["id"] for r in out) == sorted(x["id"] for x in lines)
    return {r["id"]: r for r in out}


def _load(problem: str) -> dict:
    ns: dict = {"__name__": "curate_problem"}
    exec(compile(problem, "<problem>", "exec"), ns)  # noqa: S102
    return ns


def test_ok_problems_are_kernelbench_files_that_run(results):
    ok = [r for r in results.values() if r["status"] == "ok"]
    assert {"Mlp", "ResMlp", "RMSNorm", "RGBStem", "Head128", "Attention", "Pair", "Chatty",
            "Lookup", "PreNorm", "cand_good"} <= {r["id"] for r in ok}
    for r in ok:
        ns = _load(r["problem"])
        torch.manual_seed(0)
        out = ns["Model"](*ns["get_init_inputs"]())(*ns["get_inputs"]())
        assert isinstance(out, torch.Tensor), r["id"]
        assert r["runtime_us"] > 0 and r["attempts"] >= 1 and r["reason"] is None


def test_channel_count_is_repaired(results):
    r = results["RGBStem"]
    assert r["attempts"] >= 2 and "torch.randn(2, 3, 16, 16)" in r["problem"]


def test_linear_in_features_is_repaired(results):
    r = results["Head128"]
    assert r["attempts"] >= 2 and "torch.randn(2, 8, 128)" in r["problem"]


def test_constructor_args_are_deduced(results):
    assert "return [16, 2]" in results["Attention"]["problem"]  # (dim, heads)
    assert "torch.randint(0, 2, (2, 8))" in results["Lookup"]["problem"]  # int64 indices


def test_tuple_output_gives_first_element(results):
    assert "return super().forward(*args)[0]" in results["Pair"]["problem"]


@pytest.mark.parametrize("rid,needle", [
    ("Noisy", "non-deterministic"), ("Exploding", "non-finite"),
    ("Constant", "does not depend on the inputs"), ("Sleeper", "timeout after 6 s")])
def test_execution_filter_rejects(results, rid, needle):
    assert results[rid]["status"] == "rejected" and needle in results[rid]["reason"]


def test_unrepairable_error_is_reported(results):
    r = results["MidBlock"]  # forward uses self.inner, which only subclasses define
    assert r["status"] == "rejected" and "AttributeError" in r["last_error"]
    assert "input deduction failed" in r["reason"]


def test_candidate_inputs_are_verified(results):
    assert results["cand_good"]["attempts"] == 1
    assert "torch.randn(4, 128)" in results["cand_good"]["problem"]
    bad = results["cand_bad"]
    assert bad["status"] == "rejected" and "mat1 and mat2" in bad["last_error"]


def test_bad_record_is_rejected_not_fatal():
    proc = run_cli(["inputs"], json.dumps({"id": "x", "class": "M"}) + "\n")
    assert proc.returncode == 0
    assert "no string 'source'" in jsonl(proc.stdout)[0]["reason"]
    assert run_cli(["inputs"], "not json\n").returncode == 2


@pytest.mark.parametrize("shape,error,want", [
    ([2, 16, 16, 16], "Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 16, 16, "
     "16] to have 3 channels, but got 16 channels instead", [2, 3, 16, 16]),
    ([2, 8, 16], "mat1 and mat2 shapes cannot be multiplied (16x16 and 128x10)", [2, 8, 128]),
    ([2, 8, 16], "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
     "size: [2, 8, 16]", [2, 8, 16, 16]),
    ([2, 8, 16], "not enough values to unpack (expected 4, got 3)", [2, 8, 16, 16]),
    ([2, 8, 16], "Given normalized_shape=[32], expected input with shape [*, 32], but got "
     "input of size[2, 8, 16]", [2, 8, 32]),
    ([2, 16, 8, 8], "running_mean should contain 4 elements not 16", [2, 4, 8, 8]),
    ([2, 8, 16], "The size of tensor a (16) must match the size of tensor b (64) at "
     "non-singleton dimension 2", [2, 8, 64]),
    ([2, 3, 16, 16], "Input height (16) doesn't match model (224).", [2, 3, 224, 224]),
    ([2, 3, 4, 4], "Given input size: (3x4x4). Calculated output size: (3x0x0). Output size "
     "is too small", [2, 3, 8, 8])])
def test_repairs(shape, error, want):
    fixed = repair(Spec(inputs=[TensorSpec(list(shape))]), error)
    assert fixed is not None and fixed.inputs[0].shape == want


def test_repairs_of_dtype_and_constructor():
    s = Spec(inputs=[TensorSpec([2, 8])])
    fixed = repair(s, "Expected tensor for argument #1 'indices' to have one of the following "
                      "scalar types: Long, Int; but got torch.FloatTensor instead")
    assert fixed is not None and fixed.inputs[0].dtype == "long"
    s = Spec(init_args=[16, 2], init_names=["dim", "num_heads"], inputs=[TensorSpec([2, 8, 16])])
    fixed = repair(s, "AssertionError: dim should be divisible by num_heads")
    assert fixed is not None and fixed.init_args == [16, 1]
    assert repair(s, "RuntimeError: something nobody can parse") is None


def test_class_named_model_is_renamed_when_wrapped():
    src = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n" \
          "        return (x, x)\n"
    text = render(src, "Model", Spec(inputs=[TensorSpec([2, 4])]), first_output=True)
    ns = _load(text)
    assert "class Model(Model_)" in text
    assert ns["Model"]()(*ns["get_inputs"]()).shape == (2, 4)
