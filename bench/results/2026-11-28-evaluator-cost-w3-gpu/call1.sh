# Session 2026-11-28 (sixteenth), call 1: where an evaluation's time goes (profile_eval.py on
# the five eval_timing workloads), then round 20's memo cheats beside their twins two at a time
# (uncontended), the honest entries call 4 of the last session cut, and r8_c07s/c08/c09.
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
for w in softmax_16x16384 relu_16x16384 layernorm_4096x1024 matmul_4096 gelu_128x4096x1024; do
  timeout 120 python3 bench/eval_timing/profile_eval.py bench/eval_timing/workloads/$w --top 45 \
    > $OUT/profile-$w.txt 2>&1
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
part memo-pairs '^(r20_c04|r20_c06|r20_h02|r8_h03b|r8_c07s|r8_c08|r8_c09)' "" 200 2
part honest-cut '^(r17_h03|r17_h05|r17_h06|r17_h07|r18_h03)' "--expect ok" $(( 540 - ($(date +%s) - start) )) 3
tar czf $OUT/keep.tgz -C /tmp/k memo-pairs honest-cut 2>/dev/null
echo "total $(( $(date +%s) - start ))s"
