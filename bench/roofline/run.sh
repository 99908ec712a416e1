#!/usr/bin/env bash
# GPU recording of the roofline (docs/roofline.md): the device's measured peaks next to the
# datasheet, and for the five bench/eval_timing workloads (softmax, relu, layernorm, matmul,
# gelu) the floor and the % of floor of the reference and of the candidate.
#
#   bash bench/roofline/run.sh BUILD_BIN OUT_DIR
#
# Writes OUT_DIR/peaks.json (measured fresh, with the datasheet comparison), OUT_DIR/<name>.json
# (one `eval --json` per workload, in a worker whose peak cache is OUT_DIR/cache: it measures
# the peaks itself once), OUT_DIR/env.txt and OUT_DIR/summary.md. About 2 minutes on an H100.
# Environment: KS_PYTHON (python with torch+triton, default python3); KS_ROOFLINE_BIG=1 adds the
# two KernelBench-sized workloads (softmax/relu 4096x393216, ~2 more minutes).
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
W="$ROOT/bench/eval_timing/workloads"
cd "$ROOT" || exit 2
export KS_CACHE_DIR="$OUT/cache"

{
  echo "started: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)"
  echo "git: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,power.limit \
    --format=csv 2>&1 | head -3
} > "$OUT/env.txt"

echo "[roofline] peaks" >&2
PYTHONPATH="$ROOT/python" timeout -k 10 120 "$PY" -m kernelsmith_worker.device_peaks --fresh \
  > "$OUT/peaks.json" 2> "$OUT/peaks.stderr" || echo "[roofline] peaks failed: $OUT/peaks.stderr" >&2

names="softmax_16x16384 relu_16x16384 layernorm_4096x1024 matmul_4096 gelu_128x4096x1024"
if [ "${KS_ROOFLINE_BIG:-0}" = 1 ]; then names="$names softmax_4096x393216 relu_4096x393216"; fi
for name in $names; do
  echo "[roofline] eval $name" >&2
  timeout -k 10 150 "$BIN" eval "$W/$name/problem.py" "$W/$name/candidate.py" --backend triton \
    --json > "$OUT/$name.json" 2> "$OUT/$name.stderr" ||
    echo "[roofline]   rc=$? (see $OUT/$name.stderr)" >&2
done

"$PY" "$HERE/summarize.py" "$OUT" $names > "$OUT/summary.md" 2> "$OUT/summarize.stderr" ||
  echo "[roofline] summarize.py failed: see $OUT/summarize.stderr" >&2
cat "$OUT/summary.md"
