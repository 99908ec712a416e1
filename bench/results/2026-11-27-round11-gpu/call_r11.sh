# Round 11 on the GPU host: the new unit tests on CUDA, a sample of honest GPU entries, the r11
# entries with their twins and the thread/tunable cheats of rounds 9-10. Each step tarred into $OUT.
set -u
mkdir -p /tmp/k /tmp/r
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
(cd python && timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_timed_reproduced.py \
  tests/test_signal_state.py tests/test_cpu_threads.py tests/test_malloc_state.py 2>&1 | tail -15) | tee $OUT/pytest.txt
R='^(r11_|r10_c09|r10_h01t|r9_c08|r9_h10)'
timeout 200 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 3 --only "$R" \
  --keep /tmp/r/r --out /tmp/r/r11.md >/tmp/r/r11.log 2>&1
echo "r11 rc=$?"; cut -d'|' -f2,4,5,6 /tmp/r/r11.md | tail -22; grep -A1 '^---' /tmp/r/r11.log | cut -c1-300 | head -30
tar czf $OUT/r11.tgz -C /tmp/r .
H='^(h0[1-5]_|g0[1-3]_|r1a_h0[1-4]_|r1b_h0[1-3]|r2_h0|r6_h0|r9_h0[5-7]_|r10_h0[3-5])'
timeout 130 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 5 --expect ok --only "$H" \
  --keep /tmp/k/honest --out /tmp/k/honest.md >/tmp/k/honest.log 2>&1
echo "honest rc=$?"; tail -1 /tmp/k/honest.md; grep -A1 '^---' /tmp/k/honest.log | cut -c1-300 | head -24
tar czf $OUT/honest.tgz -C /tmp/k .
