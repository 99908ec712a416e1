# Session 2026-11-29, call 1: every honest entry of the GPU part, and round 21's GPU structure
# cheats (c06g, c07g), at the worker of 12a2b69 (the structure family's defences, the stress
# runs drawn on the host, the CPU account's window cap: none of them run on a GPU before).
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cd python && timeout 80 python3 -m pytest -q -p no:cacheprovider tests/test_value_domain.py \
  tests/test_timed_inputs_stress.py 2>&1 | tail -4) | tee $OUT/pytest.txt
echo "pytest done $(( $(date +%s) - start ))s"
part() {  # name regex expect-args timeout
  timeout $4 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 6 $3 \
    --only "$2" --keep /tmp/k/$1 --out $OUT/$1.md >/tmp/k/$1.log 2>&1
  rc=$?; echo "$1 rc=$rc $(( $(date +%s) - start ))s"
  [ $rc -ne 124 ] || python3 tests/adversarial/verdicts.py check tests/adversarial/manifest.json \
    /tmp/k/$1 gpu 0 "$2" --out $OUT/$1.md $3 >> /tmp/k/$1.log 2>&1
  tail -2 $OUT/$1.md; grep -A2 '^---' /tmp/k/$1.log | cut -c1-300 | head -40 > $OUT/$1-diffs.txt
  cp /tmp/k/$1.log $OUT/
}
part r21-gpu '^r21_c0[67]g' "" 120
part honest-gpu '.' "--expect ok" $(( 570 - ($(date +%s) - start) ))
tar czf $OUT/keep.tgz -C /tmp/k r21-gpu honest-gpu 2>/dev/null
