# Session 2026-11-28 (twelfth), call 4: the five eval_timing workloads again (second run of the
# session, same command as call 2), for the CV targets' "two runs".
set -u
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
KS_BENCH_REPEAT=5 KS_BENCH_EVAL_ONLY=1 KS_BENCH_DEADLINE_S=300 timeout 320 \
  bash bench/eval_timing/run.sh .devbundle/kernelsmith /tmp/cv > /tmp/cv.log 2>&1
echo "cv rc=$?"; sed -n '/^| workload | evals ok/,/^$/p' /tmp/cv/summary.md
cp /tmp/cv/summary.md $OUT/summary.md
tar czf $OUT/cv.tgz -C /tmp cv
