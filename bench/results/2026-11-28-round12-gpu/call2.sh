# Timing CV, second run (five small workloads incl. gelu, 5 evaluations each in one warm worker),
# and the worker's start phases. Into $OUT.
set -u
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
KS_BENCH_REPEAT=5 KS_BENCH_EVAL_ONLY=1 KS_BENCH_DEADLINE_S=400 timeout 430 \
  bash bench/eval_timing/run.sh .devbundle/kernelsmith $OUT/cv > $OUT/cv.log 2>&1
echo "cv rc=$?"; cat $OUT/cv/summary.md 2>/dev/null | head -40
timeout 120 python3 bench/worker_start/phases.py --runs 2 --binary .devbundle/kernelsmith \
  --out $OUT/start.json > $OUT/start.log 2>&1
echo "start rc=$?"; tail -15 $OUT/start.log
