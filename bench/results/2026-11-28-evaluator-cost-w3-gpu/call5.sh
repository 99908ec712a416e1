# Session 2026-11-28 (sixteenth), call 5: call 4's honest Triton entries again after got_guard
# compares only the slots (libtriton.so, linked by lld, has .data between .got and .got.plt:
# call 4 took its data writes for rewritten slots).
set -u
export KS_RESOURCE_DIR=$PWD
start=$(date +%s)
re='^(h15_triton_linear_relu_dot|r1a_h02_inline_asm_exp_softmax|r8_h02b_masked_row_mean_reads_mask|r17_h01_cuda_softmax_plain_twin)$'
timeout 100 bash tests/adversarial/run.sh .devbundle/kernelsmith --gpu --jobs 4 --expect ok \
  --only "$re" --keep /tmp/h5 --out /tmp/h5.md >/tmp/h5.log 2>&1
echo "rc=$? $(( $(date +%s) - start ))s"; tail -2 /tmp/h5.md; grep -A2 '^---' /tmp/h5.log | cut -c1-300
tar czf $OUT/h5.tgz -C /tmp h5 h5.md h5.log
