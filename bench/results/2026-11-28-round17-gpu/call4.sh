# Session 2026-11-28 (thirteenth), call 4: round 17 (CUDA C++) again after the extension's
# import checks, c10/c11 for the first time; then matmul and relu CV run 2.
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
timeout 300 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 5 --only '^r17_[ch]' \
  --keep /tmp/k/r17 --out $OUT/r17-gpu.md >/tmp/k/r17.log 2>&1
echo "r17 rc=$?"; tail -1 $OUT/r17-gpu.md
grep -A2 '^---' /tmp/k/r17.log | cut -c1-600 | head -60
python3 - <<'PY' | tee $OUT/r17-verdicts.txt
import glob, json, os
for f in sorted(glob.glob("/tmp/k/r17/*.json")):
    try:
        r = json.loads(open(f).read().strip().splitlines()[-1])
    except Exception:
        print(os.path.basename(f), "no result"); continue
    rej = [x["kind"] for x in r.get("findings", []) if x.get("severity") == "reject"]
    print(os.path.basename(f)[:-5][:60], r.get("status"), r.get("speedup"), rej[:3], r.get("message", "")[:160])
PY
KS_BENCH_WORKLOADS="matmul_4096 relu_16x16384" KS_BENCH_REPEAT=5 KS_BENCH_EVAL_ONLY=1 \
  KS_BENCH_DEADLINE_S=160 timeout 180 bash bench/eval_timing/run.sh .devbundle/kernelsmith /tmp/cv > /tmp/cv.log 2>&1
echo "cv rc=$?"; sed -n '/^| workload | evals ok/,/^$/p' /tmp/cv/summary.md
cp /tmp/cv/summary.md $OUT/summary-run2.md; tar czf $OUT/cv-run2.tgz -C /tmp cv
