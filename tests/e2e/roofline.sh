#!/usr/bin/env bash
# End-to-end test of the roofline on the cpu backend (docs/roofline.md): `eval` prints the
# floor, the bound and the measured peaks (measured once, then cached), flags a lazy candidate
# as information, and the proposer's prompt carries the Roofline lines.
# Usage: tests/e2e/roofline.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source tests/e2e/lib.sh
export KS_CACHE_DIR="$tmp/cache"  # the peaks are measured in this test, then cached
cases=python/tests/cases

# 1. eval: floor, bound, both sides against it, the measured peaks; a candidate doing all the
#    work is not lazy.
check eval-roofline 0 'roofline   floor [0-9.]+ us \((memory|compute, fp32|launch-latency)\)' -- \
  "$KS" eval examples/softmax/problem.py examples/softmax/cpu_candidate.py --backend cpu
for pattern in 'reference at [0-9.]+% of the floor' 'candidate at [0-9.]+% of the floor' \
  'peaks      [0-9.]+ [kMGT]?B/s, .*fp32 [0-9.]+ [kMGT]?FLOP/s measured on' \
  'custom     kernels do 100% of the FLOPs'; do
  grep -Eq -- "$pattern" "$tmp/out" && ok "eval-shows: $pattern" || fail "eval-shows: $pattern" "$tmp/out"
done
grep -q 'lazy optimization' "$tmp/out" && fail "eval-not-lazy" "$tmp/out" || ok "eval-not-lazy"
ls "$KS_CACHE_DIR"/roofline/peaks-*.json >/dev/null 2>&1 && ok "peaks-cached-file" ||
  fail "peaks-cached-file: nothing in $KS_CACHE_DIR/roofline"

# 2. --json carries the roofline; the second worker reads the cached peaks.
check eval-json-cached 0 '"cached":true' -- \
  "$KS" eval examples/softmax/problem.py examples/softmax/cpu_candidate.py --backend cpu --json
grep -Eq '"floor_us":[0-9.e+-]+' "$tmp/out" && ok "eval-json-floor" || fail "eval-json-floor" "$tmp/out"

# 3. A candidate that leaves all but a relu to torch's elementwise ops: ok, flagged as lazy.
check eval-lazy 0 'custom     kernels do 17% of the FLOPs.*lazy optimization \(information, not a reject\)' -- \
  "$KS" eval $cases/problem_pointwise_chain.py $cases/cpu_lazy.py --backend cpu
grep -q '^status     ok' "$tmp/out" && ok "eval-lazy-is-ok" || fail "eval-lazy-is-ok" "$tmp/out"

# 4. The proposer's prompt (a command proposer that records it) holds the Roofline lines of
#    the seed's evaluation.
"$KS" evolve examples/colsum/problem.py --seed-kernel examples/colsum/cpu_seed.py --backend cpu \
  --proposer command --command "cat >> $tmp/prompts.txt; echo 'no change'" --rounds 1 \
  --islands 1 --parallel-proposals 1 --trials 2 --run-dir "$tmp/run" >"$tmp/evolve.out" 2>&1 ||
  fail "evolve" "$tmp/evolve.out"
if grep -Eq 'Roofline: candidate [0-9.]+ us; floor [0-9.]+ us \((memory|compute, fp32|launch-latency)\); at [0-9.]+% of the floor' \
  "$tmp/prompts.txt" 2>/dev/null && grep -Eq 'Roofline: the reference \([0-9.]+ us\) is at' "$tmp/prompts.txt"; then
  ok "prompt-roofline"
else
  fail "prompt-roofline" "$tmp/prompts.txt"
fi

exit $((failures > 0))
