# Session 2026-11-28 (fifteenth), call 3: the GPU part's cheats that call 2 (seven at a time)
# accepted, rerun two at a time beside their honest twins; then the five eval_timing
# workloads, 5 evaluations each (noise and cost after rounds 18-19's defences).
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
re='^(r3_c05|r3_c06|r3_c10|r5_c07|r8_c02|r8_c03|r8_c04|r8_c07s|r8_c08|r8_c09|r9_c02s|r8_h02b|r8_h03b|r8_h04|r1a_c15)'
timeout 230 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 2 --only "$re" \
  --keep /tmp/k/pairs --out $OUT/pairs-gpu.md >/tmp/k/pairs.log 2>&1
rc=$?; echo "pairs rc=$rc $(( $(date +%s) - start ))s"
[ $rc -ne 124 ] || python3 tests/adversarial/verdicts.py check tests/adversarial/manifest.json \
  /tmp/k/pairs gpu 0 "$re" --out $OUT/pairs-gpu.md >> /tmp/k/pairs.log 2>&1
tail -2 $OUT/pairs-gpu.md; cp /tmp/k/pairs.log $OUT/
tar czf $OUT/pairs.tgz -C /tmp/k pairs
left=$(( 540 - ($(date +%s) - start) ))
KS_BENCH_REPEAT=5 KS_BENCH_EVAL_ONLY=1 KS_BENCH_DEADLINE_S=$(( left - 25 )) timeout $left \
  bash bench/eval_timing/run.sh .devbundle/kernelsmith /tmp/cv > /tmp/cv.log 2>&1
echo "cv rc=$? $(( $(date +%s) - start ))s"; sed -n '/^| workload | evals ok/,/^$/p' /tmp/cv/summary.md
cp /tmp/cv/summary.md $OUT/cv-summary.md; tail -5 /tmp/cv.log
tar czf $OUT/cv.tgz -C /tmp cv
