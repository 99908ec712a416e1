# Round 14 after data_watch (defaults, class data, values compared as bytes): the r14 entries,
# unit tests, the honest GPU sample and the CPU corpus's honest entries on the GPU host.
set -u
mkdir -p /tmp/k /tmp/c
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cd python && timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_data_watch.py \
  tests/test_integrity.py tests/test_library_code.py 2>&1 | tail -4) | tee $OUT/pytest.txt
sed -i 's/^R=.*//' .devrun/call5.sh
bash .devrun/call5.sh 2>&1 | tail -12
H='^(h0[1-5]_|g0[1-3]_|r1a_h0[1-4]_|r1b_h0[1-3]|r2_h0|r6_h0|r9_h0[5-7]_|r10_h0[3-5]|r11_h0[34]|r12_h03)'
timeout 120 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 5 --expect ok --only "$H" \
  --keep /tmp/k/honest --out /tmp/k/honest.md >/tmp/k/honest.log 2>&1
echo "honest gpu rc=$?"; tail -1 /tmp/k/honest.md; grep -A1 '^---' /tmp/k/honest.log | cut -c1-300 | head -12
timeout 200 bash tests/adversarial/run.sh .devbundle/kernelsmith --jobs 8 --expect ok \
  --out /tmp/c/honest_cpu.md >/tmp/c/honest_cpu.log 2>&1
echo "honest cpu-part rc=$?"; tail -1 /tmp/c/honest_cpu.md; grep -A1 '^---' /tmp/c/honest_cpu.log | cut -c1-300 | head -12
cp /tmp/k/honest.md $OUT/honest-gpu.md; cp /tmp/c/honest_cpu.md $OUT/honest-cpu-part.md
