#!/usr/bin/env bash
# End-to-end tests of multi-shape problems (get_input_cases) on the cpu backend: the speedup is
# the cases' weighted geometric mean, a candidate right at one shape only is incorrect and the
# table says where, a 2-round tuner evolve stores the cases and gives the proposer per-shape
# feedback (under a minute on 2 cores).
# Usage: tests/e2e/shapes.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
problem=examples/colsum_shapes/problem.py
seed=examples/colsum/cpu_seed.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fast="--backend cpu --trials 2"

source tests/e2e/lib.sh

# The JSON's speedup is the weighted geometric mean of the cases' speedups.
check eval-json-geomean 0 '^geomean ok$' -- sh -c "\"$KS\" eval $problem $seed $fast --json | \
  python3 -c 'import json, math, sys
r = json.loads(sys.stdin.readline()); c = r[\"cases\"]; w = sum(x[\"weight\"] for x in c)
g = math.exp(sum(x[\"weight\"] * math.log(x[\"speedup\"]) for x in c) / w)
print(\"geomean ok\" if len(c) == 3 and abs(g / r[\"speedup\"] - 1) < 1e-9 else r)'"

# A kernel that hard-codes the first case's row length is wrong at the other shapes; the
# table says which.
sed 's/x.shape\[0\], x.shape\[1\], BLOCK)/x.shape[0], 256, BLOCK)/' $seed >"$tmp/fixed_cols.py"
check hard-coded-shape-incorrect 1 'status +incorrect +\(case square 512x512: ' -- \
  "$KS" eval $problem "$tmp/fixed_cols.py" $fast
cp "$tmp/out" "$tmp/fixed.out"
check hard-coded-shape-header 0 '^cases +3 input cases$' -- cat "$tmp/fixed.out"
check hard-coded-shape-table 0 'tall 2048x256 +weight 1 +ok' -- cat "$tmp/fixed.out"
check hard-coded-shape-feedback 0 'Per shape \(3 cases, each must be correct\): tall 2048x256 correct, square 512x512 incorrect, wide 16x4096 incorrect' -- cat "$tmp/fixed.out"

# The tuner on the multi-shape problem: results keep their cases, feedback names the shapes.
check evolve-shapes 0 'best speedup' -- "$KS" evolve $problem --seed-kernel $seed --rounds 2 \
  --parallel-proposals 1 $fast --islands 1 --run-dir "$tmp/evo"
check evolve-cases-stored 0 '^3$' -- sqlite3 "$tmp/evo/run.db" \
  "select json_array_length(result, '$.cases') from evaluations where status = 'ok' limit 1"
check evolve-feedback 0 'Per shape: [0-9.]+x at tall 2048x256 \(weight 1\)' -- sqlite3 \
  "$tmp/evo/run.db" "select json_extract(result, '$.feedback') from evaluations where status = 'ok'"
check report-cases 0 '<td>square 512x512</td><td>2</td><td>[0-9.]+x</td>' -- sh -c \
  "\"$KS\" report \"$tmp/evo\" -o \"$tmp/report.html\" >/dev/null && cat \"$tmp/report.html\""

exit $((failures > 0))
