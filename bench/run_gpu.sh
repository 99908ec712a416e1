#!/usr/bin/env bash
# Everything the evaluation service checks on a GPU machine, in one run: the GPU verdict
# tests (bench/gpu) and the timing benchmark (bench/eval_timing). About 9 minutes on an H100.
# Usage, from the repo root of a built checkout: bench/run_gpu.sh [KS_BIN] [OUT_DIR]
set -u
KS=${1:-build/kernelsmith}
OUT=${2:-bench-out}
mkdir -p "$OUT"
bash bench/gpu/run.sh "$KS" "$OUT/gpu"
gpu_rc=$?
bash bench/eval_timing/run.sh "$KS" "$OUT/eval_timing"
echo "verdicts: $OUT/gpu/verdicts.md; timing: $OUT/eval_timing/summary.md"
exit $gpu_rc
