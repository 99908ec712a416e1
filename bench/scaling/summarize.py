"""Markdown summary of a bench/scaling/run.sh directory (stdlib only).

    python3 bench/scaling/summarize.py OUT_DIR

Reads OUT_DIR/throughput.jsonl (evaluations/s per mode and GPU count), the neighbours_*.jsonl
files (`eval --repeat` EvalResults on GPU 0 with idle and busy neighbours) and power.csv.
Missing files become a note, never a crash.
"""

from __future__ import annotations

import glob
import json
import math
import os
import statistics
import sys


def cv_pct(xs: list[float]) -> float | None:
    xs = [x for x in xs if isinstance(x, (int, float)) and math.isfinite(x) and x > 0]
    if len(xs) < 2:
        return None
    return 100.0 * statistics.stdev(xs) / statistics.fmean(xs)


def fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def throughput(out: str) -> None:
    path = os.path.join(out, "throughput.jsonl")
    if not os.path.exists(path):
        print("(no throughput.jsonl)\n")
        return
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print("## Evaluation throughput\n")
    print("| mode | GPUs | evaluations | wall s | evals/s | x one GPU | / (N x one GPU) "
          "| statuses |")
    print("|---|---|---|---|---|---|---|---|")
    one: dict[str, float] = {}
    for r in rows:
        if r["mode"] == "bench":
            n, wall = r.get("evaluations", 0), r.get("wall_s", 0)
            rate = n / wall if wall else 0.0
            status = f"rc {r.get('rc')}"
        else:
            res = r["result"]
            n, wall, rate = res["n"], res["wall_s"], res["evals_per_s"]
            status = json.dumps(res["statuses"])
        g = r["gpus"]
        if g == 1:
            one[r["mode"]] = rate
        base = one.get(r["mode"])
        ratio = rate / base if base else None
        eff = ratio / g if ratio else None
        print(f"| {r['mode']} | {g} | {n} | {wall} | {rate:.3f} | {fmt(ratio, 2)} "
              f"| {fmt(eff, 2)} | {status} |")
    if "local" in one and "cluster" in one:
        print(f"\nOne GPU, cluster / local pool: {one['cluster'] / one['local']:.3f}")
    print()


def stages(out: str) -> None:
    files = sorted(glob.glob(os.path.join(out, "stages_*.jsonl")))
    if not files:
        return
    print("## Where an evaluation's time goes (mean s per stage, as the worker reports)\n")
    rows = []
    for f in files:
        recs = [json.loads(line) for line in open(f) if line.strip()]
        keys: dict[str, list[float]] = {}
        for r in recs:
            for k, v in r["stages"].items():
                if isinstance(v, (int, float)):
                    keys.setdefault(k, []).append(v)
        lat = statistics.fmean(r["latency_s"] for r in recs) if recs else None
        rows.append((os.path.basename(f)[7:-6], len(recs), lat,
                     {k: statistics.fmean(v) for k, v in keys.items()}))
    names = sorted({k for _, _, _, m in rows for k in m})
    print("| run | evals | latency s | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for tag, n, lat, m in rows:
        print(f"| {tag} | {n} | {fmt(lat, 2)} | " + " | ".join(fmt(m.get(k), 2) for k in names)
              + " |")
    print()


def neighbours(out: str) -> None:
    files = sorted(glob.glob(os.path.join(out, "neighbours_*_*.jsonl")))
    if not files:
        print("(no neighbours_*.jsonl)\n")
        return
    print("## Timing on GPU 0 with idle and busy neighbours\n")
    print("| workload | neighbours | evals | cand_us mean | cand CV % | speedup mean "
          "| speedup CV % | mean CI95 half-width % |")
    print("|---|---|---|---|---|---|---|---|")
    for f in files:
        tag, work = os.path.basename(f)[len("neighbours_"):-len(".jsonl")].split("_", 1)
        rs = []
        for line in open(f):
            try:
                rs.append(json.loads(line))
            except json.JSONDecodeError:
                pass
        ok = [r for r in rs if r.get("status") == "ok" and r.get("speedup")]
        cand = [r["cand_us"] for r in ok]
        sp = [r["speedup"] for r in ok]
        half = [100 * (c[1] - c[0]) / 2 / r["speedup"] for r in ok
                if (c := r.get("speedup_ci95")) and len(c) == 2]
        print(f"| {work} | {tag} | {len(ok)}/{len(rs)} "
              f"| {fmt(statistics.fmean(cand) if cand else None, 2)} | {fmt(cv_pct(cand))} "
              f"| {fmt(statistics.fmean(sp) if sp else None, 4)} | {fmt(cv_pct(sp))} "
              f"| {fmt(statistics.fmean(half) if half else None)} |")
    print()
    power = os.path.join(out, "power.csv")
    if os.path.exists(power):
        by_gpu: dict[str, list[float]] = {}
        for line in open(power):
            parts = [p.strip() for p in line.split(",")]
            try:
                by_gpu.setdefault(parts[0], []).append(float(parts[1].split()[0]))
            except (IndexError, ValueError):
                pass
        print("Power draw per GPU over the neighbours part (W, mean / max): " + ", ".join(
            f"GPU {g} {statistics.fmean(v):.0f} / {max(v):.0f}" for g, v in by_gpu.items()))
        print()


def main() -> None:
    out = sys.argv[1]
    env = os.path.join(out, "env.txt")
    if os.path.exists(env):
        print("```\n" + open(env).read().strip() + "\n```\n")
    throughput(out)
    stages(out)
    neighbours(out)


if __name__ == "__main__":
    main()
