# After the syscall() fix: the r13 CPU entries on the GPU host's worker, unit tests on CUDA,
# and a second timing CV run (five small workloads incl. gelu). Into $OUT.
set -u
mkdir -p /tmp/c
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cd python && timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_pc_sample.py \
  tests/test_library_code.py tests/test_signal_state.py tests/test_os_threads.py 2>&1 | tail -4) | tee $OUT/pytest.txt
timeout 100 bash tests/adversarial/run.sh .devbundle/kernelsmith --jobs 6 --only '^r13_' \
  --keep /tmp/c/c --out /tmp/c/r13_cpu_on_gpu_host.md >/tmp/c/c.log 2>&1
echo "r13 cpu-on-gpu-host rc=$?"; tail -2 /tmp/c/r13_cpu_on_gpu_host.md; grep -A1 '^---' /tmp/c/c.log | cut -c1-300 | head -20
tar czf $OUT/r13_cpu_on_gpu_host.tgz -C /tmp/c .
KS_BENCH_REPEAT=5 KS_BENCH_EVAL_ONLY=1 KS_BENCH_DEADLINE_S=330 timeout 360 \
  bash bench/eval_timing/run.sh .devbundle/kernelsmith /tmp/cv > $OUT/cv.log 2>&1
echo "cv rc=$?"; sed -n '/## Noise/,/## Mean/p' /tmp/cv/summary.md
tar czf $OUT/cv.tgz -C /tmp cv
