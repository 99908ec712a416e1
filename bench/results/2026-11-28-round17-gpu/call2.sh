# Session 2026-11-28 (thirteenth), call 2: the five eval_timing workloads, 5 evaluations each
# (CV run 1 after the steady figure's 1 % dead band); the GIL-holder unit test with its figures.
set -u
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
cat /proc/version | tee $OUT/kernel.txt; cat /proc/thread-self/schedstat | tee -a $OUT/kernel.txt
(cd python && timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_cpu_threads.py \
  -k holding 2>&1 | grep -E "blocked|record|passed|failed" | cut -c1-600 | head -8) | tee $OUT/pytest.txt
KS_BENCH_REPEAT=5 KS_BENCH_EVAL_ONLY=1 KS_BENCH_DEADLINE_S=300 timeout 330 \
  bash bench/eval_timing/run.sh .devbundle/kernelsmith /tmp/cv > /tmp/cv.log 2>&1
echo "cv rc=$?"; sed -n '/^| workload | evals ok/,/^$/p' /tmp/cv/summary.md
cp /tmp/cv/summary.md $OUT/summary.md
tar czf $OUT/cv.tgz -C /tmp cv
