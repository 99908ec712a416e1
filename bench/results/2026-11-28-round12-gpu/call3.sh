# Round 12-13 on the GPU host, final code: unit tests on CUDA; the r12 CPU-backend entries
# evaluated by a GPU host's worker (library reach, CPU sampler, thread budget); the r13 cheats
# and twins (GPU and CPU); the honest GPU sample; gelu's load phases. Tarred into $OUT.
set -u
mkdir -p /tmp/k /tmp/r /tmp/c
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/device.txt
(cd python && timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_pc_sample.py \
  tests/test_library_reach.py tests/test_timed_inputs_stress.py tests/test_signal_state.py 2>&1 | tail -15) | tee $OUT/pytest.txt
# CPU-backend entries on the GPU host's worker (the CPU part, not --gpu)
timeout 150 bash tests/adversarial/run.sh .devbundle/kernelsmith --jobs 6 --only '^(r12_c0|r12_h0[12]|r13_|r10_c09|r11_c05)' \
  --keep /tmp/c/c --out /tmp/c/cpu_on_gpu_host.md >/tmp/c/c.log 2>&1
echo "cpu-on-gpu-host rc=$?"; tail -2 /tmp/c/cpu_on_gpu_host.md; grep -A1 '^---' /tmp/c/c.log | cut -c1-300 | head -20
tar czf $OUT/cpu_on_gpu_host.tgz -C /tmp/c .
R=${R13:-'^(r11_c0[157]|r11_h0[34]|r12_c04|r12_h03|r10_c09|r13_)'}
timeout 150 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 4 --only "$R" \
  --keep /tmp/r/r --out /tmp/r/r13.md >/tmp/r/r13.log 2>&1
echo "r13 gpu rc=$?"; tail -2 /tmp/r/r13.md; grep -A1 '^---' /tmp/r/r13.log | cut -c1-300 | head -30
tar czf $OUT/r13.tgz -C /tmp/r .
H='^(h0[1-5]_|g0[1-3]_|r1a_h0[1-4]_|r1b_h0[1-3]|r2_h0|r6_h0|r9_h0[5-7]_|r10_h0[3-5]|r11_h0[34]|r12_h03)'
timeout 120 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 5 --expect ok --only "$H" \
  --keep /tmp/k/honest --out /tmp/k/honest.md >/tmp/k/honest.log 2>&1
echo "honest rc=$?"; tail -1 /tmp/k/honest.md; grep -A1 '^---' /tmp/k/honest.log | cut -c1-300 | head -24
tar czf $OUT/honest.tgz -C /tmp/k .
W=bench/eval_timing/workloads/gelu_128x4096x1024
timeout 60 .devbundle/kernelsmith eval $W/problem.py $W/candidate.py --backend triton --json > $OUT/gelu.json 2>$OUT/gelu.err
echo "gelu rc=$?"; python3 -c "import json;r=json.load(open('$OUT/gelu.json'));print(r['status'],{k:round(v.get('duration_s',0),2) for k,v in r['stages'].items() if isinstance(v,dict)});print(r['stages']['load'].get('phases_s'))"
