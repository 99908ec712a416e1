# Session 2026-11-29, call 2: every honest entry of the GPU part again, after this session's
# worker changes (the refresh's per-input values made when the slots are made, structure of
# non-finite values and 0/1 integer masks broken, complex outputs compared on both parts),
# and round 9's memo cheats beside the twins call 1 rejected as accounting_failed.
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
part() {  # name regex expect-args timeout
  timeout $4 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 6 $3 \
    --only "$2" --keep /tmp/k/$1 --out $OUT/$1.md >/tmp/k/$1.log 2>&1
  rc=$?; echo "$1 rc=$rc $(( $(date +%s) - start ))s"
  [ $rc -ne 124 ] || python3 tests/adversarial/verdicts.py check tests/adversarial/manifest.json \
    /tmp/k/$1 gpu 0 "$2" --out $OUT/$1.md $3 >> /tmp/k/$1.log 2>&1
  tail -2 $OUT/$1.md; grep -A2 '^---' /tmp/k/$1.log | cut -c1-300 | head -40 > $OUT/$1-diffs.txt
  cp /tmp/k/$1.log $OUT/
}
part r9-gpu '^r9_(c01|c07|h01|h09)' "" 150
part honest-gpu '.' "--expect ok" $(( 575 - ($(date +%s) - start) ))
tar czf $OUT/keep.tgz -C /tmp/k r9-gpu honest-gpu 2>/dev/null
