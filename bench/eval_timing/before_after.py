"""Two eval_timing runs side by side: noise and GPU seconds per evaluation, before and after.

    python3 bench/eval_timing/before_after.py BEFORE_DIR AFTER_DIR [--out FILE.md]

Each directory is an OUT_DIR of bench/eval_timing/run.sh (its <workload>.jsonl files).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys

from summarize import ORDER, TARGET_CAND_CV, TARGET_SPEEDUP_CV, fmt, mark, ours_stats, read_jsonl


def load(out_dir: str) -> dict[str, dict]:
    got = {}
    for path in sorted(glob.glob(os.path.join(out_dir, "*.jsonl"))):
        name = os.path.basename(path)[:-len(".jsonl")]
        if name != "steps":
            got[name] = ours_stats(read_jsonl(path)[0])
    return got


def table(before: dict[str, dict], after: dict[str, dict]) -> str:
    names = [n for n in ORDER if n in before or n in after]
    names += sorted((set(before) | set(after)) - set(names))
    lines = ["| workload | evals ok | cand CV % | speedup CV % | mean speedup | gpu s/eval "
             "| after/before | timing s | looks |", "|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        b, a = before.get(n) or {}, after.get(n) or {}
        ratio = (a["gpu_s"] / b["gpu_s"]) if a.get("gpu_s") and b.get("gpu_s") else None
        lines.append(
            f"| {n} | {b.get('n_ok', 0)}/{b.get('n', 0)} → {a.get('n_ok', 0)}/{a.get('n', 0)} "
            f"| {fmt(b.get('cand_cv'), 3)} → {fmt(a.get('cand_cv'), 3)}"
            f"{mark(a.get('cand_cv'), TARGET_CAND_CV)} "
            f"| {fmt(b.get('speedup_cv'), 3)} → {fmt(a.get('speedup_cv'), 3)}"
            f"{mark(a.get('speedup_cv'), TARGET_SPEEDUP_CV)} "
            f"| {fmt(b.get('speedup_mean'), 4)} → {fmt(a.get('speedup_mean'), 4)} "
            f"| {fmt(b.get('gpu_s'), 2)} → {fmt(a.get('gpu_s'), 2)} | {fmt(ratio, 2)} "
            f"| {fmt(b.get('timing_s_warm'), 2)} → {fmt(a.get('timing_s_warm'), 2)} "
            f"| {fmt(a.get('looks'), 1)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--out")
    args = ap.parse_args()
    for d in (args.before, args.after):
        if not os.path.isdir(d):
            print(f"before_after: {d} is not a directory (give two run.sh OUT_DIRs)",
                  file=sys.stderr)
            return 2
    text = table(load(args.before), load(args.after))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
