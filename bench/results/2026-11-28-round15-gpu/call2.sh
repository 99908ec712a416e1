# Session 2026-11-28 (twelfth), call 2: round 15 (cpu backend) and the entries closed this
# session on the GPU host's CPU; the GPU part's cheats of rounds 12-14 and the timed/memo
# families; then the five eval_timing workloads (5 evaluations each in one warm worker): the
# cost per evaluation and the load stage's phases after the input cache change.
set -u
mkdir -p /tmp/c /tmp/g
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
timeout 150 bash tests/adversarial/run.sh .devbundle/kernelsmith --jobs 6 \
  --only '^(r15_|r13_c03|r14_c05|r13_h0|r14_h0)' --keep /tmp/c/r --out $OUT/r15-cpu-on-gpu-host.md \
  >/tmp/c/r15.log 2>&1
echo "r15 cpu rc=$?"; tail -1 $OUT/r15-cpu-on-gpu-host.md
grep -A2 '^---' /tmp/c/r15.log | cut -c1-300 | head -30
timeout 170 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 5 --expect rejected \
  --only '^(r1[234]_|r1b_c1|r1a_c2|r2_c0|r7_c|r5_c0[68]|r6_c01)' --keep /tmp/g/r --out $OUT/cheats-gpu.md \
  >/tmp/g/cheats.log 2>&1
echo "gpu cheats rc=$?"; tail -1 $OUT/cheats-gpu.md
grep -A2 '^---' /tmp/g/cheats.log | cut -c1-300 | head -30
KS_BENCH_REPEAT=5 KS_BENCH_EVAL_ONLY=1 KS_BENCH_DEADLINE_S=230 timeout 250 \
  bash bench/eval_timing/run.sh .devbundle/kernelsmith $OUT/cv > $OUT/cv.log 2>&1
echo "cv rc=$?"; cat $OUT/cv/summary.md 2>/dev/null | head -40
python3 - <<'PY'
import glob, json, os
for f in sorted(glob.glob(os.environ["OUT"] + "/cv/*.jsonl")):
    for line in open(f):
        try:
            r = json.loads(line)
        except Exception:
            continue
        ph = ((r.get("stages") or {}).get("load") or {}).get("phases_s") or {}
        print(os.path.basename(f), "dur", r.get("duration_s") and round(r["duration_s"], 2),
              {k: round(v, 2) for k, v in ph.items() if v > 0.05})
PY
