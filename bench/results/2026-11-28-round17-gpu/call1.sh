# Session 2026-11-28 (thirteenth), call 1: unit tests of the changed worker modules on the GPU
# host; the matmul workload's steady-state trace (reference and candidate back to back, four
# rounds); every honest entry of the GPU part (native_builds' mapping check must accept
# Triton's launchers and torch's lazy libraries).
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cd python && timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_native_builds.py \
  tests/test_cpu_threads.py 2>&1 | tail -6) | tee $OUT/pytest.txt
(nvidia-smi dmon -s pc -d 1 > $OUT/dmon-trace.txt 2>&1 &)
timeout 90 python3 bench/eval_timing/steady_trace.py bench/eval_timing/workloads/matmul_4096 \
  --seconds 2.5 --rounds 4 --pause 1.5 --out $OUT/steady-trace-matmul.json > $OUT/steady-trace-matmul.txt 2>&1
echo "trace rc=$?"; cut -c1-400 $OUT/steady-trace-matmul.txt
pkill -f "nvidia-smi dmon" || true
timeout 440 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 5 --expect ok \
  --keep /tmp/k/honest --out $OUT/honest-gpu.md >/tmp/k/honest.log 2>&1
echo "honest gpu rc=$?"; tail -1 $OUT/honest-gpu.md
grep -A2 '^---' /tmp/k/honest.log | cut -c1-400 | head -40 | tee $OUT/honest-gpu-diffs.txt
