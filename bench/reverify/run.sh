#!/usr/bin/env bash
# The re-verification investigation on a GPU machine: for each case, the independent scripts
# (reverify.py: do_bench_cudagraph; power.py: per-call events in different power states) and
# investigate.py (the evaluator's timing under several settings, with per-replay traces).
# Usage: bench/reverify/run.sh OUT_DIR
set -u
OUT=${1:?usage: run.sh OUT_DIR}
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")" && pwd)
for c in 76_Gemm_Add_ReLU 99_Matmul_GELU_Softmax 43_MinGPTCausalAttention; do
  d=$here/cases/$c
  timeout 240 python3 "$here/investigate.py" "$d/problem.py" "$d/candidate.py" >"$OUT/$c.json" 2>"$OUT/$c.log"
  echo "$c investigate rc=$?"
  timeout 120 python3 "$here/cases/reverify.py" "$d/problem.py" "$d/candidate.py" 2>>"$OUT/$c.log" | tee -a "$OUT/independent.txt"
  timeout 120 python3 "$here/cases/power.py" "$d/problem.py" "$d/candidate.py" 2>>"$OUT/$c.log" | tee -a "$OUT/independent.txt"
done
