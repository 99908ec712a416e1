"""`cluster`: features of each module, HDBSCAN (scikit-learn), the most central member of each
cluster.

Features (default, "tfidf+hdbscan"): TF-IDF over the operators (`op:conv2d`), the family
(`fam:attention`) and normalized-token 3-grams of the source (normalize.tokens), reduced to
at most 64 dimensions by truncated SVD and L2-normalized (euclidean distance then orders
like cosine distance). With --embed ("minilm+hdbscan"): sentence embeddings of the source
from a locally installed sentence-transformers model (KS_EMBED_MODEL: a directory or a
model name already in the local cache; default all-MiniLM-L6-v2), never downloaded at run
time; when unavailable, a line on stderr and TF-IDF instead.

The central member of a cluster is the one closest to the cluster's mean feature vector.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from kernelsmith_curate import normalize


def _doc_features(rec: dict[str, Any]) -> list[str]:
    feats = [f"op:{op}" for op in rec.get("ops") or []]
    if rec.get("family"):
        feats.append(f"fam:{rec['family']}")
    try:
        toks = normalize.tokens(rec.get("source") or "")
    except (SyntaxError, ValueError):
        toks = []
    feats += [" ".join(toks[i:i + 3]) for i in range(max(0, len(toks) - 2))]
    return feats


def tfidf_features(records: list[dict[str, Any]]) -> np.ndarray:
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize as l2

    docs = [_doc_features(r) for r in records]
    vec = TfidfVectorizer(analyzer=lambda d: d, sublinear_tf=True)
    x = vec.fit_transform(docs)
    dims = min(64, x.shape[1] - 1, len(records) - 1)
    if dims >= 2:
        x = TruncatedSVD(n_components=dims, random_state=0).fit_transform(x)
    else:
        x = x.toarray()
    return l2(np.asarray(x, dtype=np.float64))


def embed_features(records: list[dict[str, Any]]) -> np.ndarray | None:
    """MiniLM embeddings, or None (reason on stderr) when no local model is available."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        print("cluster: --embed needs the sentence-transformers package and a local "
              "all-MiniLM-L6-v2; not installed, using TF-IDF", file=sys.stderr)
        return None
    name = os.environ.get("KS_EMBED_MODEL", "sentence-transformers/all-MiniLM-L6-v2")
    try:
        model = SentenceTransformer(name, device="cpu", local_files_only=True)
    except Exception as e:  # noqa: BLE001 - any loading failure means: fall back
        print(f"cluster: --embed: model '{name}' not available locally ({e}); using TF-IDF",
              file=sys.stderr)
        return None
    emb = model.encode([r.get("source") or "" for r in records], normalize_embeddings=True)
    return np.asarray(emb, dtype=np.float64)


def cluster(records: list[dict[str, Any]], embed: bool = False, min_cluster_size: int = 5
            ) -> dict[str, Any]:
    """{"method", "clusters": [{"id", "members", "central"}], "noise"}."""
    ids = [str(r.get("id")) for r in records]
    method = "tfidf+hdbscan"
    x: np.ndarray | None = None
    if embed and records:
        x = embed_features(records)
        if x is not None:
            method = "minilm+hdbscan"
    k = max(2, min_cluster_size)
    if len(records) < k:
        return {"method": method, "clusters": [], "noise": ids}
    if x is None:
        x = tfidf_features(records)
    from sklearn.cluster import HDBSCAN

    labels = HDBSCAN(min_cluster_size=k, copy=True).fit_predict(x)
    clusters = []
    for label in sorted(set(labels) - {-1}):
        idx = np.flatnonzero(labels == label)
        center = x[idx].mean(axis=0)
        central = idx[int(np.argmin(((x[idx] - center) ** 2).sum(axis=1)))]
        clusters.append({"id": len(clusters), "members": [ids[i] for i in idx],
                         "central": ids[central]})
    noise = [ids[i] for i in np.flatnonzero(labels == -1)]
    return {"method": method, "clusters": clusters, "noise": noise}
