"""extract: self-containment, rejections, hashes, families (on tests/curate_data)."""

from __future__ import annotations

import pytest

from kernelsmith_curate import normalize
from kernelsmith_curate.family import family
from kernelsmith_curate.ops import source_ops

from .helpers import REPO_A, REPO_B, extract


@pytest.fixture(scope="module")
def recs_a() -> dict[str, dict]:
    recs = extract(REPO_A, sorted((REPO_A / "pkg").glob("*.py")))
    return {r["class"]: r for r in recs}


@pytest.fixture(scope="module")
def recs_b() -> list[dict]:
    return extract(REPO_B, sorted(REPO_B.glob("*.py")))


def _exec(source: str) -> dict:
    ns: dict = {"__name__": "curate_test_source"}
    exec(compile(source, "<source>", "exec"), ns)  # noqa: S102 - test of self-containment
    return ns


def test_every_module_class_is_found_with_provenance(recs_a):
    assert set(recs_a) == {"RMSNorm", "Mlp", "BaseBlock", "MidBlock", "ResMlp", "UsesEinops",
                           "UsesDropPath", "LocalImport", "RGBStem", "Head128", "Attention",
                           "Pair", "PreNorm"}
    r = recs_a["Mlp"]
    assert (r["file"], r["repo"], r["license"]) == ("pkg/blocks.py", "repo_a", "LICENSE")
    assert (REPO_A / r["file"]).read_text().splitlines()[r["line"] - 1].startswith("class Mlp(")


def test_helpers_constants_are_inlined_and_nothing_else(recs_a):
    src = recs_a["Mlp"]["source"]
    assert recs_a["Mlp"]["status"] == "ok"
    for needed in ("def scaled_gelu", "SCALE = 0.5", "def _init_weights", "import math",
                   "import torch.nn.functional as F"):
        assert needed in src
    for unneeded in ("_unused_constant", "einops", "timm", "Optional", "__main__", "ResMlp"):
        assert unneeded not in src
    assert "Mlp" in _exec(src)


def test_indirect_bases_and_submodules_across_files_are_inlined(recs_a):
    r = recs_a["ResMlp"]
    assert r["status"] == "ok", r["reason"]
    src = r["source"]
    for needed in ("class BaseBlock", "class MidBlock", "class Mlp", "class RMSNorm",
                   "def rms", "EPS = 1e-06", "Norm = RMSNorm"):
        assert needed in src
    # dependencies come before their users: the file runs top to bottom
    assert src.index("class RMSNorm") < src.index("Norm = RMSNorm") < src.index("class ResMlp")
    assert issubclass(_exec(src)["ResMlp"], _exec(src)["torch"].nn.Module)


def test_star_import_of_a_repository_module_is_followed(recs_a):
    r = recs_a["PreNorm"]
    assert r["status"] == "ok", r["reason"]
    assert "class RMSNorm" in r["source"] and "import *" not in r["source"]
    _exec(r["source"])


@pytest.mark.parametrize("cls,needle", [("UsesEinops", "third-party import 'einops'"),
                                        ("UsesDropPath", "third-party import 'timm.layers'"),
                                        ("LocalImport", "'scipy.special' imported inside"),
                                        ("BaseBlock", "no forward()")])
def test_rejections_say_why(recs_a, cls, needle):
    assert recs_a[cls]["status"] == "rejected"
    assert needle in recs_a[cls]["reason"]


def test_syntax_error_gives_one_file_record(recs_b):
    bad = [r for r in recs_b if r["file"] == "broken.py"]
    assert len(bad) == 1 and bad[0]["class"] is None and bad[0]["status"] == "rejected"
    assert "syntax error" in bad[0]["reason"] and "line 3" in bad[0]["reason"]


def test_renamed_duplicates_share_ast_hash_and_tokens(recs_b):
    by = {(r["file"], r["class"]): r for r in recs_b}
    orig, ren = by[("original.py", "Gate")], by[("renamed.py", "SigmoidGate")]
    diff = by[("different.py", "Gate")]
    assert orig["ast_hash"] == ren["ast_hash"]
    assert orig["tokens"] == ren["tokens"]
    assert orig["ast_hash"] != diff["ast_hash"]  # only a constant differs: not a duplicate
    assert len(orig["ast_hash"]) == 64 and "ID" in orig["tokens"] and "NUM" in orig["tokens"]


def test_normalization_keeps_attributes_and_builtins():
    a = "class A:\n    def f(self, x):\n        return len(self.alpha) + x\n"
    b = "class B:\n    def g(self, y):\n        return len(self.beta) + y\n"
    assert normalize.ast_hash(a) != normalize.ast_hash(b)  # attribute names are kept
    assert normalize.tokens(a) == ["class", "ID", ":", "def", "ID", "(", "ID", ",", "ID", ")",
                                   ":", "return", "len", "(", "ID", ".", "alpha", ")", "+",
                                   "ID"]


def test_ops_resolve_through_imports():
    src = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
           "class M(nn.Module):\n    def __init__(self, act=nn.GELU):\n"
           "        super().__init__()\n        self.c = nn.Conv2d(3, 8, 3)\n"
           "        self.p = nn.Parameter(torch.zeros(3))\n"
           "    def forward(self, x):\n        y = F.relu(self.c(x))\n"
           "        return (y @ y).softmax(-1) + torch.sum(y)\n")
    ops = source_ops(src)
    assert set(ops) == {"gelu", "conv2d", "relu", "matmul", "softmax", "add", "sum"}


@pytest.mark.parametrize("ops,name,fam", [
    (["cross_entropy"], "Crit", "loss"), (["lstm", "linear"], "Enc", "recurrent"),
    (["linear", "softmax", "matmul"], "MHA", "attention"),
    (["layer_norm", "linear", "softmax", "matmul", "gelu"], "EncoderLayer", "transformer_block"),
    (["conv2d", "batchnorm2d", "relu", "add"], "BasicBlock", "residual_block"),
    (["conv2d", "batchnorm2d", "relu"], "ConvBNAct", "convolution"),
    (["conv2d", "linear", "maxpool2d", "batchnorm2d"], "Net", "composite"),
    (["embedding"], "Tok", "embedding"), (["sin", "cos", "mul"], "Enc", "positional"),
    (["topk", "softmax", "linear"], "Router", "gating_moe"),
    (["interpolate"], "Up", "upsampling"), (["max_pool2d"], "P", "pooling"),
    (["mean", "rsqrt", "mul"], "RMSNorm", "normalization"), (["gelu"], "G", "activation"),
    (["dropout"], "D", "dropout_noise"), (["sum"], "S", "reduction"),
    (["add", "mul"], "Fma", "elementwise"), (["bmm"], "B", "matmul"), ([], "X", "other")])
def test_family_rules(ops, name, fam):
    assert family(ops, name) == fam


def test_families_of_the_fixtures(recs_a, recs_b):
    assert recs_a["Attention"]["family"] == "attention"
    assert recs_a["RGBStem"]["family"] == "convolution"
    assert recs_a["RMSNorm"]["family"] == "normalization"
    lookup = next(r for r in recs_b if r["class"] == "Lookup")
    assert lookup["family"] == "embedding" and lookup["ops"] == ["embedding"]
