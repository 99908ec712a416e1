# Session 2026-11-28 (fifteenth), call 2: every cheat of the GPU part except rounds 18-19 (run in call 1).
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
part() {  # name regex expect-args timeout
  timeout $4 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 7 $3 \
    --only "$2" --keep /tmp/k/$1 --out $OUT/$1.md >/tmp/k/$1.log 2>&1
  rc=$?; echo "$1 rc=$rc $(( $(date +%s) - start ))s"
  [ $rc -ne 124 ] || python3 tests/adversarial/verdicts.py check tests/adversarial/manifest.json \
    /tmp/k/$1 gpu 0 "$2" --out $OUT/$1.md $3 >> /tmp/k/$1.log 2>&1
  tail -2 $OUT/$1.md; grep -A2 '^---' /tmp/k/$1.log | cut -c1-300 | head -40 > $OUT/$1-diffs.txt
  cp /tmp/k/$1.log $OUT/
}
part cheats-gpu '^(?!r1[89]_)' "--expect rejected" $(( 575 - ($(date +%s) - start) ))
tar czf $OUT/keep.tgz -C /tmp/k cheats-gpu 2>/dev/null
