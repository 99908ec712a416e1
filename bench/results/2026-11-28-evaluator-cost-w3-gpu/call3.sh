# Session 2026-11-28 (sixteenth), call 3: the five eval_timing workloads, 5 evaluations each,
# twice (issue: two separate runs of the same code), after the rounding-error figure moved to
# the device; then honest GPU entries and the use-count cheats after the one-constructor change
# (inputs.present), three at a time.
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
for run in 1 2; do
  KS_BENCH_REPEAT=5 KS_BENCH_EVAL_ONLY=1 KS_BENCH_DEADLINE_S=175 timeout 195 \
    bash bench/eval_timing/run.sh .devbundle/kernelsmith /tmp/cv$run > /tmp/cv$run.log 2>&1
  echo "cv$run rc=$? $(( $(date +%s) - start ))s"
  sed -n '/^| workload | evals ok/,/^$/p' /tmp/cv$run/summary.md
  cp /tmp/cv$run/summary.md $OUT/cv-summary-run$run.md
done
tar czf $OUT/cv.tgz -C /tmp cv1 cv2 cv1.log cv2.log
part() {  # name regex expect-args timeout jobs
  timeout $4 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs $5 $3 \
    --only "$2" --keep /tmp/k/$1 --out $OUT/$1.md >/tmp/k/$1.log 2>&1
  rc=$?; echo "$1 rc=$rc $(( $(date +%s) - start ))s"
  [ $rc -ne 124 ] || python3 tests/adversarial/verdicts.py check tests/adversarial/manifest.json \
    /tmp/k/$1 gpu 0 "$2" --out $OUT/$1.md $3 >> /tmp/k/$1.log 2>&1
  tail -2 $OUT/$1.md; grep -A2 '^---' /tmp/k/$1.log | cut -c1-300 | head -40 > $OUT/$1-diffs.txt
  cp /tmp/k/$1.log $OUT/
}
part honest-w3 '^(r1a_h01_splitk_atomic_matmul|r1a_h02_inline_asm_exp_softmax|r1a_h04_custom_op_linear_pretransposed|r1a_h06_persistent_autotune_matmul|r2_h01_offset_view_workspace|r3_h05_linear_repacked_weight|r4_h04_lazy_weight_transpose_linear|r8_h02b_masked_row_mean_reads_mask|r9_h04_cross_entropy_ignore_index|h15_triton_linear_relu_dot|g05_triton_tf32_dot|r17_h01_cuda_softmax_plain_twin|r17_h07_cuda_wmma_tf32_gemm_twin|r10_h03_triton_block_ptr_linear_relu)$' "--expect ok" 150 3
part cheats-w3 '^(r20_c01_|r20_c02|r20_c03)' "" $(( 570 - ($(date +%s) - start) )) 3
tar czf $OUT/keep.tgz -C /tmp/k honest-w3 cheats-w3 2>/dev/null
echo "total $(( $(date +%s) - start ))s"
