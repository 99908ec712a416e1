# Session 2026-11-29, call 3: round 9's 4M-id memo/poison cheats and their twins one at a time
# (call 2 ran them six at a time: contention), r6_h02 alone (glue_compute in call 2, ok in
# call 1), then the five eval_timing workloads, 5 evaluations each (issue: timing noise, run 2).
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
re='^(r9_(c01|c07|h01|h09)_|r6_h02_)'
timeout 200 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 1 --only "$re" \
  --keep /tmp/k/alone --out $OUT/alone-gpu.md >/tmp/k/alone.log 2>&1
rc=$?; echo "alone rc=$rc $(( $(date +%s) - start ))s"
[ $rc -ne 124 ] || python3 tests/adversarial/verdicts.py check tests/adversarial/manifest.json \
  /tmp/k/alone gpu 0 "$re" --out $OUT/alone-gpu.md >> /tmp/k/alone.log 2>&1
tail -2 $OUT/alone-gpu.md; cp /tmp/k/alone.log $OUT/
left=$(( 570 - ($(date +%s) - start) ))
KS_BENCH_REPEAT=5 KS_BENCH_EVAL_ONLY=1 KS_BENCH_DEADLINE_S=$(( left - 25 )) timeout $left \
  bash bench/eval_timing/run.sh .devbundle/kernelsmith /tmp/cv > /tmp/cv.log 2>&1
echo "cv rc=$? $(( $(date +%s) - start ))s"; sed -n '/^| workload | evals ok/,/^$/p' /tmp/cv/summary.md
cp /tmp/cv/summary.md $OUT/cv-summary.md 2>/dev/null
tar czf $OUT/keep.tgz -C /tmp/k alone -C /tmp cv 2>/dev/null
