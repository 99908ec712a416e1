"""The client of bench/reward_noise/run.sh: N rewards of one parent/child pair, and N ratios
of two separate evaluations, then their CVs (OUT/rewards.jsonl, OUT/summary.md).

The pair: examples/softmax's Triton kernel with BLOCK_SIZE = 1024 (parent) and 2048 (child,
a SEARCH/REPLACE completion) on the triton backend; examples/colsum's cpu seed with BLOCK = 64
and 256 on the cpu backend. Rounds alternate: one /v1/reward, then one /v1/evaluate of the
child and one of the parent, so drift affects both methods alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import urllib.request
from pathlib import Path

PAIRS = {
    "triton": ("examples/softmax/problem.py", "examples/softmax/triton_candidate.py",
               "BLOCK_SIZE = 2048\n", "BLOCK_SIZE = 1024\n", "BLOCK_SIZE = 2048\n"),
    "cpu": ("examples/colsum/problem.py", "examples/colsum/cpu_seed.py",
            "BLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]\n",
            "BLOCK = 64\n", "BLOCK = 256\n"),
}


def post(url: str, body: dict, timeout: float = 900) -> dict:
    req = urllib.request.Request(url, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def cv(xs: list[float]) -> float | None:
    return 100 * statistics.stdev(xs) / statistics.mean(xs) if len(xs) > 1 else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--backend", default="triton", choices=sorted(PAIRS))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--deadline-s", type=float, default=300)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    problem_path, seed_path, line, parent_line, child_line = PAIRS[a.backend]
    problem, seed = Path(problem_path).read_text(), Path(seed_path).read_text()
    if line not in seed:
        raise SystemExit(f"{seed_path} no longer holds {line!r}: update PAIRS")
    parent, child = seed.replace(line, parent_line), seed.replace(line, child_line)
    truth = {"problem_id": Path(problem_path).parent.name, "reference_code": problem,
             "parent_code": parent, "backend": a.backend, "parent_speedup": 1.0}
    completion = f"```\n<<<<<<< SEARCH\n{parent_line}=======\n{child_line}>>>>>>> REPLACE\n```\n"
    out = Path(a.out)
    rows, t0 = [], time.monotonic()
    with open(out / "rewards.jsonl", "w") as log:
        for i in range(a.n):
            if time.monotonic() - t0 > a.deadline_s:
                print(f"deadline: {i} of {a.n} rounds")
                break
            r = post(f"{a.url}/v1/reward", {"items": [{"completion": completion,
                                                       "ground_truth": truth}]})["results"][0]
            ev = {name: post(f"{a.url}/v1/evaluate",
                             {"problem_source": problem, "candidate_source": src,
                              "problem_path": problem_path, "backend": a.backend})
                  for name, src in (("child", child), ("parent", parent))}
            row = {"round": i, "reward": r["reward"], "status": r["status"],
                   "parent_baseline": r.get("parent_baseline"),
                   "ci95": r.get("speedup_vs_parent_ci95"),
                   "child_speedup": ev["child"].get("speedup"),
                   "parent_speedup": ev["parent"].get("speedup"),
                   "eval_status": [ev["child"]["status"], ev["parent"]["status"]]}
            ok = row["child_speedup"] and row["parent_speedup"]
            row["ratio_of_two"] = row["child_speedup"] / row["parent_speedup"] if ok else None
            log.write(json.dumps(row) + "\n")
            log.flush()
            rows.append(row)
            print(json.dumps(row))
    inter = [r["reward"] for r in rows if r["status"] == "ok"]
    two = [r["ratio_of_two"] for r in rows if r["ratio_of_two"]]
    lines = [f"# Reward noise ({a.backend}, {len(rows)} rounds)", "",
             "| method | n | mean | CV % | min | max |", "|---|---|---|---|---|---|"]
    for name, xs in (("interleaved (/v1/reward)", inter), ("ratio of two evaluations", two)):
        if xs:
            lines.append(f"| {name} | {len(xs)} | {statistics.mean(xs):.4f} | "
                         f"{cv(xs) or 0:.3f} | {min(xs):.4f} | {max(xs):.4f} |")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if inter else 1


if __name__ == "__main__":
    raise SystemExit(main())
