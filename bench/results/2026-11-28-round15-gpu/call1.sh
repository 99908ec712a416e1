# Session 2026-11-28 (twelfth), call 1: unit tests of the changed worker modules on the GPU host,
# then every honest entry of the corpus's GPU part (Triton compiled for the GPU, gpu_only
# entries) against the manifest: the held-back spikes draw after the timing loop, the input
# cache's admission rule and the CPU sampler's changes must keep them accepted.
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cd python && timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_pc_sample.py \
  tests/test_inputs.py tests/test_audit_hardening.py tests/test_library_reach.py \
  tests/test_cpu_ext.py tests/test_library_code.py 2>&1 | tail -6) \
  | tee $OUT/pytest.txt
timeout 400 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 5 --expect ok \
  --keep /tmp/k/honest --out $OUT/honest-gpu.md >/tmp/k/honest.log 2>&1
echo "honest gpu rc=$?"; tail -1 $OUT/honest-gpu.md
grep -A2 '^---' /tmp/k/honest.log | cut -c1-400 | head -40 | tee $OUT/honest-gpu-diffs.txt
python3 - <<'PY' | tee $OUT/honest-gpu-durations.txt
import glob, json, os
rows = []
for f in glob.glob("/tmp/k/honest/*.json"):
    try:
        r = json.loads(open(f).read().strip().splitlines()[-1])
    except Exception:
        continue
    rows.append((r.get("duration_s") or 0, os.path.basename(f)[:-5], r.get("status"),
                 r.get("speedup")))
rows.sort(reverse=True)
print("entries", len(rows), "sum duration_s", round(sum(x[0] for x in rows), 1))
for d, i, s, sp in rows[:10]:
    print(round(d, 1), i, s, sp)
PY
