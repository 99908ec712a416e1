"""A small C++-free driver for testing the package end to end (the product orchestration is
`kernelsmith curate` in C++): extract every .py under SRC, drop exact duplicates (ast_hash),
run inputs on the rest, cluster what passed. Writes OUT/modules.jsonl (extract records with
the inputs outcome merged), OUT/problems/<family>/<n>_<Class>.py and OUT/clusters.json,
and prints the counts."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from kernelsmith_curate.cluster import cluster
from kernelsmith_curate.extract import extract_file
from kernelsmith_curate.inputs import InputsOptions, run_inputs
from kernelsmith_curate.license import LicenseFinder
from kernelsmith_curate.repo import Repo


def run_pipeline(src: Path, out: Path, timeout_s: float = 20.0, limit: int = 0,
                 seed: int = 42) -> int:
    if not src.is_dir():
        print(f"pipeline: {src} is not a directory", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    repo, licenses = Repo(src), LicenseFinder(src)
    files = sorted(p for p in src.rglob("*.py") if p.is_file())
    records: list[dict[str, Any]] = []
    for f in files:
        records += extract_file(repo, licenses, f)
    self_contained = sum(r["status"] == "ok" for r in records)
    seen: dict[str, int] = {}
    todo: list[dict[str, Any]] = []
    for n, rec in enumerate(records):
        rec["id"] = str(n)
        if rec["status"] != "ok":
            continue
        if rec["ast_hash"] in seen:
            rec.update(status="duplicate", reason=f"same ast_hash as {seen[rec['ast_hash']]}")
            continue
        seen[rec["ast_hash"]] = n
        if not limit or len(todo) < limit:
            todo.append({"id": rec["id"], "source": rec["source"], "class": rec["class"]})
    by_id = {r["id"]: r for r in records}
    (out / "problems").mkdir(parents=True, exist_ok=True)
    passed: list[dict[str, Any]] = []
    for res in run_inputs(todo, InputsOptions(timeout_s=timeout_s, seed=seed)):
        rec = by_id[res["id"]]
        rec.update(status=res["status"], reason=res["reason"], runtime_us=res["runtime_us"],
                   attempts=res["attempts"], last_error=res["last_error"])
        if res["status"] == "ok":
            d = out / "problems" / rec["family"]
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{rec['id']}_{rec['class']}.py").write_text(res["problem"], encoding="utf-8")
            passed.append(rec)
    result = cluster(passed, min_cluster_size=3)
    (out / "clusters.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    with open(out / "modules.jsonl", "w", encoding="utf-8") as f:
        for rec in records:
            rec.pop("tokens", None)
            rec.pop("class_tokens", None)
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    modules = [r for r in records if r.get("class")]
    print(f"files {len(files)}  modules {len(modules)}  self-contained "
          f"{self_contained}  "
          f"unique {len(seen)}  tried {len(todo)}  executable {len(passed)}  "
          f"clusters {len(result['clusters'])}  wall {time.monotonic() - t0:.1f} s")
    return 0
