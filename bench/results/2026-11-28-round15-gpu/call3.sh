# Session 2026-11-28 (twelfth), call 3: after the CPU sampler's foreign-library rule and the
# runtime judged by file location: every honest entry of the CPU part on the GPU host's CPU
# (its Python is a venv: other folders than the VM's), and rounds 15-16 there.
set -u
mkdir -p /tmp/c
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cd python && timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_pc_sample.py \
  tests/test_library_reach.py tests/test_cpu_threads.py 2>&1 | tail -4) | tee $OUT/pytest.txt
timeout 330 bash tests/adversarial/run.sh .devbundle/kernelsmith --jobs 8 --expect ok --only "$(cat bench/results/2026-11-28-round15-gpu/call3-cpu-honest-regex.txt)" \
  --out $OUT/honest-cpu-part-on-gpu-host.md >/tmp/c/honest.log 2>&1
echo "honest cpu-part rc=$?"; tail -1 $OUT/honest-cpu-part-on-gpu-host.md
grep -A2 '^---' /tmp/c/honest.log | cut -c1-300 | head -24
timeout 120 bash tests/adversarial/run.sh .devbundle/kernelsmith --jobs 6 --only '^r1[56]_' \
  --out $OUT/r15-r16-cpu-on-gpu-host.md >/tmp/c/r.log 2>&1
echo "r15/r16 rc=$?"; tail -1 $OUT/r15-r16-cpu-on-gpu-host.md
grep -A2 '^---' /tmp/c/r.log | cut -c1-300 | head -24
