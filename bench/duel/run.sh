#!/usr/bin/env bash
# Challenger-vs-incumbent timing (`eval --baseline`, the engine's new-best duel) on a GPU.
# Usage: bench/duel/run.sh path/to/kernelsmith OUT_DIR
# 1. the softmax Triton candidate against itself, 5 times: the speedup must sit at 1 with a
#    CI that contains 1 (no false "faster");
# 2. BLOCK_SIZE variants against it, both ways: the duel's verdict must agree with the
#    difference of their reference-timed speedups;
# 3. a tuner evolve whose log shows the duels the engine ran.
set -euo pipefail
KS=$1
OUT=$2
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
ex=examples/softmax
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp $ex/triton_candidate.py "$work/b2048.py"
sed 's/^BLOCK_SIZE = 2048/BLOCK_SIZE = 1024/' $ex/triton_candidate.py >"$work/b1024.py"
sed 's/^BLOCK_SIZE = 2048/BLOCK_SIZE = 4096/' $ex/triton_candidate.py >"$work/b4096.py"
grep -q 'BLOCK_SIZE = 1024' "$work/b1024.py"

run() {  # name candidate [baseline]
  local name=$1 cand=$2 base=${3:-}
  if [ -n "$base" ]; then
    "$KS" eval $ex/problem.py "$cand" --backend triton --json --repeat 3 --baseline "$base" \
      >"$OUT/$name.jsonl"
  else
    "$KS" eval $ex/problem.py "$cand" --backend triton --json --repeat 3 >"$OUT/$name.jsonl"
  fi
}
run self "$work/b2048.py" "$work/b2048.py"
run ref-2048 "$work/b2048.py"
run ref-1024 "$work/b1024.py"
run ref-4096 "$work/b4096.py"
run 1024-vs-2048 "$work/b1024.py" "$work/b2048.py"
run 2048-vs-1024 "$work/b2048.py" "$work/b1024.py"
run 4096-vs-2048 "$work/b4096.py" "$work/b2048.py"

"$KS" evolve $ex/problem.py --seed-kernel $ex/triton_candidate.py --backend triton \
  --proposer tuner --rounds 8 --run-dir "$work/run" >"$OUT/evolve.log" 2>&1 || true
cp "$work/run/summary.json" "$OUT/evolve-summary.json" 2>/dev/null || true
grep -E 'timed against|not declared best|new best' "$work/run/"*.log >"$OUT/duels.txt" 2>/dev/null || true

python3 - "$OUT" <<'PY'
import json, pathlib, statistics, sys
out = pathlib.Path(sys.argv[1])
rows = []
for f in sorted(out.glob("*.jsonl")):
    rs = [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
    for i, r in enumerate(rs):
        b = r.get("vs_baseline")
        if b:
            lo, hi = b["speedup_ci95"] or [None, None]
            rows.append(f"| {f.stem} | {i+1} | vs baseline | {b['speedup']:.4f} | {lo:.4f}-{hi:.4f} | {b['baseline_us']:.2f} | {b['cand_us']:.2f} |")
        else:
            lo, hi = r.get("speedup_ci95") or [0, 0]
            rows.append(f"| {f.stem} | {i+1} | vs reference | {r['speedup']:.4f} | {lo:.4f}-{hi:.4f} | {r['ref_us']:.2f} | {r['cand_us']:.2f} |")
dev = json.loads((out / "self.jsonl").read_text().splitlines()[0])["device"].get("name", "?")
text = [f"device: {dev}", "", "| pair | # | timed against | speedup | 95% CI | baseline/ref us | cand us |",
        "|---|---|---|---|---|---|---|", *rows]
(out / "duel.md").write_text("\n".join(text) + "\n")
print("\n".join(text))
PY
