"""The reference timed alone (docs/evaluation.md, "The reference alone") in an eval_timing run.

    python3 bench/eval_timing/ref_alone.py OUT_DIR/*.jsonl

One line per evaluation: workload, status, timing method and calls per sample, the
reference's compared figure in the timing stage and alone (us a call; on the CPU its CPU
time), their ratio (the one compared
with the threshold), the confirmation's median ratio when it ran, and the seconds the
measurement took (load stage) and the timing stage took. Ends with the largest ratio seen
and how many evaluations were rejected as reference_slowed (an honest workload must have
none).
"""

from __future__ import annotations

import json
import os
import sys


def rows(path: str) -> list[dict]:
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def main(paths: list[str]) -> int:
    worst, slowed, n = 0.0, 0, 0
    for path in paths:
        name = os.path.basename(path).rsplit(".", 1)[0]
        for r in rows(path):
            n += 1
            t = (r.get("stages") or {}).get("timing") or {}
            a = t.get("ref_alone") or {}
            ratio = t.get("ref_alone_ratio")
            worst = max(worst, ratio or 0.0)
            kinds = {f.get("kind") for f in r.get("findings") or []}
            slowed += "reference_slowed" in kinds
            after = (a.get("after") or {}).get("ratio")
            after_s = (a.get("after") or {}).get("duration_s") or 0
            load_s = ((r.get("stages") or {}).get("load") or {}).get("phases_s", {}).get(
                "ref_alone")
            fig = next(iter((a.get("figures") or {}).values()), {})  # the figure compared
            print(f"{name:24} {r.get('status'):8} {t.get('method')!s:11} "
                  f"k={t.get('calls_per_sample')!s:5} ref {fig.get('us') or 0:10.2f} us "
                  f"alone {fig.get('alone_us') or 0:10.2f} us ratio {ratio or 0:6.3f} "
                  f"after {after or 0:6.3f} ({after_s:.2f} s) alone_s {load_s or 0:6.3f} "
                  f"timing_s {t.get('duration_s') or 0:6.2f} {a.get('error', '')}")
    print(f"{n} evaluations, largest ratio {worst:.3f}, reference_slowed {slowed}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
