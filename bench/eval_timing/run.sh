#!/usr/bin/env bash
# GPU benchmark of the evaluator's timing (bench/README.md, "eval_timing").
#
#   bash bench/eval_timing/run.sh BUILD_BIN OUT_DIR
#
# For each workload: `BUILD_BIN eval problem.py candidate.py --backend triton --repeat N --json`
# (N evaluations in one warm worker) into OUT_DIR/<name>.jsonl, then compare_methods.py
# (KernelBench events, do_bench, do_bench_cudagraph, our timing in process) into
# OUT_DIR/compare_<group>.json; finally summarize.py writes OUT_DIR/summary.md.
# A failing or timed-out step is recorded in OUT_DIR/steps.jsonl and the run goes on. Steps are
# ordered by priority and skipped once the overall deadline (KS_BENCH_DEADLINE_S, default 420 s)
# is near, so the whole run ends in under 8 minutes.
#
# Environment: KS_PYTHON (python with torch+triton, default python3), KS_BENCH_DEADLINE_S,
# KS_BENCH_REPEAT (default 10), KS_BENCH_BIG_REPEAT (KernelBench-sized workloads, default 3),
# KS_BENCH_EVAL_ONLY=1 (only the five small workloads' `eval` steps: no compare_methods.py,
# no KernelBench-sized inputs; for before/after runs of the evaluator itself),
# KS_BENCH_WORKLOADS (space-separated names: only these workloads' steps; default all).
set -u

if [ $# -lt 2 ]; then
  echo "usage: bash $0 BUILD_BIN OUT_DIR" >&2
  exit 2
fi
BIN=$(realpath "$1")
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${KS_PYTHON:-python3}
DEADLINE_S=${KS_BENCH_DEADLINE_S:-420}
REPEAT=${KS_BENCH_REPEAT:-10}
BIG_REPEAT=${KS_BENCH_BIG_REPEAT:-3}
START=$(date +%s)
W="$HERE/workloads"
cd "$ROOT" || exit 2
: > "$OUT/steps.jsonl"

remaining() { echo $((DEADLINE_S - ($(date +%s) - START))); }

gpu_state() {  # read-only queries; fields a driver lacks just print an error line
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit,memory.used --format=csv 2>&1 | head -5
  nvidia-smi --query-gpu=clocks_event_reasons.active --format=csv,noheader 2>/dev/null | head -2
}

# step STEP WORKLOAD LIMIT_S STDOUT_FILE STDERR_FILE CMD...
step() {
  local name=$1 wl=$2 limit=$3 so=$4 se=$5
  shift 5
  local rem
  rem=$(remaining)
  if [ "$rem" -lt 20 ]; then
    echo "[run] skip $name $wl: overall deadline" >&2
    printf '{"step":"%s","workload":"%s","rc":null,"wall_s":0,"note":"skipped: overall deadline"}\n' \
      "$name" "$wl" >> "$OUT/steps.jsonl"
    return 0
  fi
  if [ "$limit" -gt "$rem" ]; then limit=$rem; fi
  echo "[run] $name $wl (limit ${limit}s, $(remaining)s left)" >&2
  local t0 t1 rc note="" mem
  t0=$(date +%s.%N)
  timeout -k 10 "$limit" "$@" > "$so" 2> "$se"
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then note="timed out after ${limit}s"; fi
  mem=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader 2>/dev/null | head -1)
  note="$note${note:+; }GPU memory used after: ${mem:-?}"
  printf '{"step":"%s","workload":"%s","rc":%d,"wall_s":%s,"note":"%s"}\n' "$name" "$wl" "$rc" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')" "$note" >> "$OUT/steps.jsonl"
  echo "[run]   rc=$rc $note" >&2
}

selected() { [ -z "${KS_BENCH_WORKLOADS:-}" ] || [[ " $KS_BENCH_WORKLOADS " == *" $1 "* ]]; }

# eval_workload NAME REPEAT LIMIT_S
eval_workload() {
  selected "$1" || return 0
  step eval "$1" "$3" "$OUT/$1.jsonl" "$OUT/$1.stderr" \
    "$BIN" eval "$W/$1/problem.py" "$W/$1/candidate.py" --backend triton --repeat "$2" --json
}

# compare GROUP LIMIT_S [compare_methods.py options and workloads...]
compare() {
  local group=$1 limit=$2
  shift 2
  local rem
  rem=$(remaining)
  if [ "$limit" -gt "$rem" ]; then limit=$rem; fi
  # compare_methods stops starting repetitions 25 s before the step's limit and saves its JSON
  step compare "$group" "$limit" "$OUT/compare_$group.log" "$OUT/compare_$group.stderr" \
    "$PY" "$HERE/compare_methods.py" --out "$OUT/compare_$group.json" \
    --deadline-s $((limit > 45 ? limit - 25 : 20)) "$@"
}

{
  echo "started: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)"
  echo "binary: $BIN"
  echo "git: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "python: $($PY -c 'import sys, torch, triton; print(sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)' 2>&1 | tail -1)"
  echo "GPU at start:"
  gpu_state
} > "$OUT/env.txt"

# 1. the small workloads: our evaluator, then the methods side by side
for name in softmax_16x16384 relu_16x16384 layernorm_4096x1024 matmul_4096; do
  eval_workload "$name" "$REPEAT" 75
done
EVAL_ONLY=${KS_BENCH_EVAL_ONLY:-0}
[ "$EVAL_ONLY" = 1 ] || compare small 130 softmax_16x16384 relu_16x16384 layernorm_4096x1024 matmul_4096

# 2. gelu: 2 GiB of input per call
eval_workload gelu_128x4096x1024 "$REPEAT" 75
[ "$EVAL_ONLY" = 1 ] || compare gelu 60 gelu_128x4096x1024

# 3. KernelBench-sized (6.4 GB per tensor): fewer evaluations, 30 KernelBench trials per
#    repetition instead of 100 (each call takes ~4 ms), and the cost of KernelBench's inputs
for name in softmax_4096x393216 relu_4096x393216; do
  [ "$EVAL_ONLY" = 1 ] && break
  eval_workload "$name" "$BIG_REPEAT" 90
  compare "$name" 75 --kb-trials 30 --kb-inputs "$name"
done

{
  echo "GPU at end ($(($(date +%s) - START)) s after start):"
  gpu_state
} >> "$OUT/env.txt"
"$PY" "$HERE/summarize.py" "$OUT" > /dev/null 2> "$OUT/summarize.stderr" ||
  echo "[run] summarize.py failed: see $OUT/summarize.stderr" >&2
echo "[run] done in $(($(date +%s) - START)) s; summary: $OUT/summary.md" >&2
head -60 "$OUT/summary.md" 2>/dev/null
exit 0
