# Session 2026-11-28 (thirteenth), call 3: red-team round 17 (CUDA C++ backend, written by a
# fresh reader on the CPU VM, never run before) on the GPU; the cpu-backend entries on the
# host's CPU (demand rule, blocked share less the host's steal); the GIL-holder unit test.
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
head -1 /proc/stat | tee $OUT/stat.txt
(cd python && timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_cpu_threads.py \
  2>&1 | grep -E "blocked|passed|failed" | cut -c1-600 | head -8) | tee $OUT/pytest.txt
timeout 340 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 4 --only '^r17_[ch]' \
  --keep /tmp/k/r17 --out $OUT/r17-gpu.md >/tmp/k/r17.log 2>&1
echo "r17 rc=$?"; tail -1 $OUT/r17-gpu.md
grep -A2 '^---' /tmp/k/r17.log | cut -c1-700 | head -60
mkdir -p $OUT/r17 && cp /tmp/k/r17/*.json $OUT/r17/ 2>/dev/null; for f in /tmp/k/r17/*.log; do tail -c 3000 "$f" > $OUT/r17/$(basename $f); done
timeout 130 bash tests/adversarial/run.sh .devbundle/kernelsmith --jobs 8 \
  --only "$(cat bench/results/2026-11-28-round17-gpu/call3-cpu-regex.txt)" --keep /tmp/k/cpu --out $OUT/cpu-on-gpu-host.md \
  >/tmp/k/cpu.log 2>&1
echo "cpu rc=$?"; tail -1 $OUT/cpu-on-gpu-host.md
grep -A2 '^---' /tmp/k/cpu.log | cut -c1-300 | head -24
python3 - <<'PY' | tee $OUT/cpu-demand.txt
import glob, json, os
for f in sorted(glob.glob("/tmp/k/cpu/*.json")):
    try:
        r = json.loads(open(f).read().strip().splitlines()[-1])
    except Exception:
        continue
    t = (r.get("stages") or {}).get("timing") or {}
    print(os.path.basename(f)[:-5][:50], r.get("status"), t.get("cand_threads_used"),
          t.get("cand_threads_demanded"), t.get("cpu_available"))
PY
