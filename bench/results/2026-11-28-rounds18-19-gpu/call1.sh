# Session 2026-11-28 (fifteenth), call 1: rounds 18-19 on the GPU (cheats and honest twins),
# r17_h07, then every honest entry of the GPU part, after Triton host modules per worker,
# observer switches by identity and whole-name kernel attribution.
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cd python && timeout 80 python3 -m pytest -q -p no:cacheprovider tests/test_triton_hosts.py \
  tests/test_observer_switches.py tests/test_native_builds.py 2>&1 | tail -4) | tee $OUT/pytest.txt
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
part r18-r19-gpu '^(r1[89]_|r17_h07)' "" 170
part honest-gpu '^(?!r1[89]_)' "--expect ok" $(( 565 - ($(date +%s) - start) ))
tar czf $OUT/keep.tgz -C /tmp/k r18-r19-gpu honest-gpu 2>/dev/null
