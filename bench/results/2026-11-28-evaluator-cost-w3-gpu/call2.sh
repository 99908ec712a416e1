# Session 2026-11-28 (sixteenth), call 2: call 1's profiles again (their files did not come back: too many), in one archive;
# then the histogram memo cheats, r8_c08 and their honest twins one at a time (uncontended).
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
for w in softmax_16x16384 relu_16x16384 layernorm_4096x1024 matmul_4096 gelu_128x4096x1024; do
  timeout 120 python3 bench/eval_timing/profile_eval.py bench/eval_timing/workloads/$w --top 45 \
    > /tmp/k/profile-$w.txt 2>&1
  echo "profile $w rc=$? $(( $(date +%s) - start ))s"
done
part() {  # name regex expect-args timeout jobs
  timeout $4 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs $5 $3 \
    --only "$2" --keep /tmp/k/$1 --out $OUT/$1.md >/tmp/k/$1.log 2>&1
  rc=$?; echo "$1 rc=$rc $(( $(date +%s) - start ))s"
  [ $rc -ne 124 ] || python3 tests/adversarial/verdicts.py check tests/adversarial/manifest.json \
    /tmp/k/$1 gpu 0 "$2" --out $OUT/$1.md $3 >> /tmp/k/$1.log 2>&1
  tail -2 $OUT/$1.md; grep -A2 '^---' /tmp/k/$1.log | cut -c1-300 | head -40 > $OUT/$1-diffs.txt
  cp /tmp/k/$1.log $OUT/
}
tar czf $OUT/profiles.tgz -C /tmp/k $(cd /tmp/k && ls profile-*.txt)
part singles '^(r20_c04|r20_h02|r8_h03b|r8_c08|r8_h08)' "" $(( 540 - ($(date +%s) - start) )) 1
tar czf $OUT/keep.tgz -C /tmp/k singles 2>/dev/null
echo "total $(( $(date +%s) - start ))s"
