# Session 2026-11-28 (sixteenth), call 4: the final code on the GPU: workers now start with
# LD_BIND_NOW=1 and hold the libraries' relocation slots (got_guard.py). softmax and gelu,
# three evaluations each (gelu's warm cost after the rounding-error figure moved to the
# device), honest entries of both GPU backends, round 21's GPU entries and r20_c03.
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/k/device.txt
KS_BENCH_REPEAT=3 KS_BENCH_EVAL_ONLY=1 KS_BENCH_DEADLINE_S=140 \
  KS_BENCH_WORKLOADS="softmax_16x16384 gelu_128x4096x1024" timeout 160 \
  bash bench/eval_timing/run.sh .devbundle/kernelsmith /tmp/k/cv > /tmp/k/cv.log 2>&1
echo "cv rc=$? $(( $(date +%s) - start ))s"; sed -n '/^| workload | evals ok/,/^$/p' /tmp/k/cv/summary.md
part() {  # name regex expect-args timeout jobs
  timeout $4 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs $5 $3 \
    --only "$2" --keep /tmp/k/$1 --out /tmp/k/$1.md >/tmp/k/$1.log 2>&1
  rc=$?; echo "$1 rc=$rc $(( $(date +%s) - start ))s"
  [ $rc -ne 124 ] || python3 tests/adversarial/verdicts.py check tests/adversarial/manifest.json \
    /tmp/k/$1 gpu 0 "$2" --out /tmp/k/$1.md $3 >> /tmp/k/$1.log 2>&1
  tail -2 /tmp/k/$1.md; grep -A2 '^---' /tmp/k/$1.log | cut -c1-300 | head -20
}
part honest-final '^(r17_h01_cuda_softmax_plain_twin|r17_h07_cuda_wmma_tf32_gemm_twin|r17_h02_cuda_persistent_softmax_atomic_rows|r1a_h02_inline_asm_exp_softmax|r1a_h06_persistent_autotune_matmul|r5_h01_library_named_triton_gemm|h15_triton_linear_relu_dot|r18_h03_splitk_atomic_matmul_jit_named_like_library|r1a_h04_custom_op_linear_pretransposed)$' "--expect ok" 170 3
part r21-gpu '^(r21_c06g|r21_c07g|r20_c03|r8_h02b)' "" $(( 400 - ($(date +%s) - start) )) 2
tar czf $OUT/all.tgz -C /tmp/k . 2>/dev/null
echo "total $(( $(date +%s) - start ))s"
