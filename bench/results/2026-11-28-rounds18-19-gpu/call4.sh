# Session 2026-11-28 (fifteenth), call 4: round 20 on the GPU and the cheats the 1-D id
# resampling touches, then the honest GPU entries with TF32 dots, low precision, inline asm,
# integer or boolean inputs (the timed refresh and the capped timed budget changed).
set -u
mkdir -p /tmp/k
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
part() {  # name regex expect-args timeout
  timeout $4 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 6 $3 \
    --only "$2" --keep /tmp/k/$1 --out $OUT/$1.md >/tmp/k/$1.log 2>&1
  rc=$?; echo "$1 rc=$rc $(( $(date +%s) - start ))s"
  [ $rc -ne 124 ] || python3 tests/adversarial/verdicts.py check tests/adversarial/manifest.json \
    /tmp/k/$1 gpu 0 "$2" --out $OUT/$1.md $3 >> /tmp/k/$1.log 2>&1
  tail -2 $OUT/$1.md; grep -A2 '^---' /tmp/k/$1.log | cut -c1-300 | head -40 > $OUT/$1-diffs.txt
  cp /tmp/k/$1.log $OUT/
}
part r20-gpu '^(r20_|r8_c0[79]|r2_c06|r9_c0)' "" 110
part honest-sel '^(h15_triton_linear_relu_dot|g05_triton_tf32_dot|r1a_c16_host_gap|r1a_c18_device_content_memo|r1a_h01_splitk_atomic_matmul|r1a_h02_inline_asm_exp_softmax|r1a_h04_custom_op_linear_pretransposed|r1a_h06_persistent_autotune_matmul|r1b_c01_device_fp_memo|r1b_c01b_device_fp_memo_2048|r1b_c02_checksum_memo|r1b_c04_seed_rederive|r1b_h01_tf32_matmul|r1b_h01b_tf32_matmul_2048|r1b_h03_splitk_atomic|r1b_h03b_splitk_atomic_large_k|r1b_h05_fast_exp_asm_softmax|r2_c01_slot_offset_skip|r2_c02_side_stream_eager|r2_c06_int_input_memo|r2_c08_cross_slot_batching|r2_h01_offset_view_workspace|r2_h03_int_row_sum_two_stage|r2_h04_sqrt_matmul_splitk|r3_h01_persistent_atomic_queue_matmul|r3_h03_dft_matmul_rfft|r3_h04_host_read_eager_matmul|r3_h05_linear_repacked_weight|r4_h02_record_function_matmul|r4_h03_random_tile_order_matmul|r4_h04_lazy_weight_transpose_linear|r5_h01_library_named_triton_gemm|r5_h03_splitk_zero_fill_atomic_matmul|r7_h02_triton_linear_bias_relu_k_loop|r8_h02_masked_row_mean_reads_mask|r8_h02b_masked_row_mean_reads_mask|r8_h04_gemm_with_device_clock_bookkeeping|r9_h02_masked_log_softmax_two_pass|r9_h02s_masked_log_softmax_two_pass|r9_h04_cross_entropy_ignore_index|r10_h03s_triton_block_ptr_linear_relu|r10_h03_triton_block_ptr_linear_relu|r11_h04_triton_ce_probe_always_exact|r17_h01_cuda_softmax_plain_twin|r17_h02_cuda_persistent_softmax_atomic_rows|r17_h03_cuda_softmax_ptx_cg_two_launches_view|r17_h04_cuda_fused_scale_shift_twin|r17_h05_cuda_layernorm_packed_params_twin|r17_h06_cuda_linear_rows_plain_twin|r17_h07_cuda_wmma_tf32_gemm_twin|r18_h03_splitk_atomic_matmul_jit_named_like_library|r18_h03s_splitk_atomic_matmul_jit_named_like_library)$' "--expect ok" $(( 330 - ($(date +%s) - start) ))
tar czf $OUT/keep.tgz -C /tmp/k r20-gpu honest-sel 2>/dev/null
