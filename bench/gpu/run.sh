#!/usr/bin/env bash
# GPU checks of `kernelsmith eval`: verdicts on honest, cheating and faulty candidates
# (cases.txt), worker replacement after a CUDA fault, then the timing benchmark.
# Usage (on the GPU machine, from the repo root): bench/gpu/run.sh KS_BIN OUT_DIR
set -u
KS=${1:?usage: run.sh KS_BIN OUT_DIR}
OUT=${2:?usage: run.sh KS_BIN OUT_DIR}
mkdir -p "$OUT"
problem=examples/softmax/problem.py
summary="$OUT/verdicts.md"
{
  echo "# GPU verdicts ($(date -u +%Y-%m-%dT%H:%MZ))"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo
  echo "| candidate | backend | expected | got | findings (reject) | speedup | wall ms | verdict |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$summary"
failures=0
while read -r cand backend want finding; do
  case "$cand" in ''|'#'*) continue ;; esac
  start=$(date +%s%N)
  json=$("$KS" eval "$problem" "$cand" --backend "$backend" --json 2>>"$OUT/stderr.log" | tail -1)
  wall=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "$json" >>"$OUT/verdicts.jsonl"
  got=$(echo "$json" | grep -o '"status":"[a-z_]*"' | head -1 | cut -d'"' -f4)
  rejects=$(echo "$json" | grep -o '"kind":"[a-z_]*","severity":"reject"' | cut -d'"' -f4 | sort -u | tr '\n' ' ')
  [ -z "$rejects" ] && rejects=$(echo "$json" | grep -o '"detail":"[^"]*","kind":"[a-z_]*","severity":"reject"' | sed 's/.*"kind":"\([a-z_]*\)".*/\1/' | sort -u | tr '\n' ' ')
  speedup=$(echo "$json" | grep -o '"speedup":[0-9.e+-]*' | head -1 | cut -d: -f2)
  verdict=PASS
  echo "$got" | grep -Eqx "$want" || verdict=FAIL
  if [ "$finding" != "-" ] && ! echo "$json" | grep -q "\"kind\":\"$finding\""; then verdict=FAIL; fi
  [ "$verdict" = FAIL ] && failures=$((failures + 1))
  echo "| $cand | $backend | $want | ${got:-none} | ${rejects:--} | ${speedup:--} | $wall | $verdict |" >>"$summary"
done <bench/gpu/cases.txt

# A CUDA fault poisons the worker: the pool must replace it and serve the next request.
"$KS" eval "$problem" bench/gpu/cases/illegal_access.py --backend triton --repeat 2 --json \
  >"$OUT/fault_repeat.jsonl" 2>>"$OUT/stderr.log"
n=$(grep -c '"status":"\(runtime_error\|crash\)"' "$OUT/fault_repeat.jsonl")
echo >>"$summary"
echo "Illegal-access candidate evaluated twice in one pool: $n/2 results runtime_error|crash" >>"$summary"
[ "$n" -eq 2 ] || failures=$((failures + 1))
echo "verdict failures: $failures" >>"$summary"
cat "$summary"
[ "$failures" -eq 0 ]
