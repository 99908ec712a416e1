# Round 12 defences on the GPU host: unit tests on CUDA, r10-r12 entries (library reach, CPU
# thread budget on a GPU host, blocks on Triton), the honest GPU sample. Tarred into $OUT.
set -u
mkdir -p /tmp/k /tmp/r
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
which readelf nm c++ | tee -a $OUT/device.txt
(cd python && timeout 80 python3 -m pytest -q -p no:cacheprovider tests/test_library_reach.py \
  tests/test_library_code.py tests/test_cpu_threads.py tests/test_malloc_state.py 2>&1 | tail -15) | tee $OUT/pytest.txt
R='^(r12_|r11_|r10_c09|r10_h01t)'
timeout 250 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 3 --only "$R" \
  --keep /tmp/r/r --out /tmp/r/r12.md >/tmp/r/r12.log 2>&1
echo "r12 rc=$?"; cut -d'|' -f2,4,5,6 /tmp/r/r12.md | tail -30; grep -A1 '^---' /tmp/r/r12.log | cut -c1-300 | head -30
tar czf $OUT/r12.tgz -C /tmp/r .
H='^(h0[1-5]_|g0[1-3]_|r1a_h0[1-4]_|r1b_h0[1-3]|r2_h0|r6_h0|r9_h0[5-7]_|r10_h0[3-5])'
timeout 150 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 5 --expect ok --only "$H" \
  --keep /tmp/k/honest --out /tmp/k/honest.md >/tmp/k/honest.log 2>&1
echo "honest rc=$?"; tail -1 /tmp/k/honest.md; grep -A1 '^---' /tmp/k/honest.log | cut -c1-300 | head -24
tar czf $OUT/honest.tgz -C /tmp/k .
