#!/usr/bin/env bash
# One GPU run of the evaluator's trust checks: the re-verification cases through
# `kernelsmith eval` (the speedup it reports), each followed by the independent steady-state
# harness (bench/reverify/cases/reverify.py, do_bench_cudagraph) on the same machine, and the
# hacking corpus's GPU part (old corpus and the red-team rounds).
# Usage: bench/redteam_gpu.sh KS_BIN OUT_DIR [ADVERSARIAL_REGEX]
#   KS_REVERIFY_CASES: the re-verification cases to evaluate (default: all three; "" none)
#   KS_ADV_TIMEOUT: seconds allowed for the corpus (default 450)
set -u
KS=${1:?usage: redteam_gpu.sh KS_BIN OUT_DIR [REGEX]}
OUT=${2:?usage: redteam_gpu.sh KS_BIN OUT_DIR [REGEX]}
mkdir -p "$OUT"
export KS_RESOURCE_DIR=$(pwd)  # the checkout's worker and prompts, not the bundle's copy
for c in ${KS_REVERIFY_CASES-76_Gemm_Add_ReLU 99_Matmul_GELU_Softmax 43_MinGPTCausalAttention}; do
  d=bench/reverify/cases/$c
  timeout 120 "$KS" eval "$d/problem.py" "$d/candidate.py" --backend triton --json >"$OUT/eval_$c.json" 2>"$OUT/eval_$c.log"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); t=r['stages'].get('timing',{}); print(sys.argv[2], r['status'], r['speedup'], r['speedup_ci95'], r['ref_us'], r['cand_us'], 'reported', t.get('reported'), 'checked', t.get('speedup_checked'), 'steady', (t.get('steady') or {}).get('speedup'), (t.get('steady') or {}).get('speedup_ci95'), 'dur', t.get('duration_s'), r['message'][:200])" "$OUT/eval_$c.json" "$c"
  # the independent steady-state harness on the same machine, right after
  timeout 120 python3 bench/reverify/cases/reverify.py "$d/problem.py" "$d/candidate.py" 2>>"$OUT/eval_$c.log"
done
only=()
[ -n "${3:-}" ] && only=(--only "$3")
timeout "${KS_ADV_TIMEOUT:-450}" bash tests/adversarial/run.sh "$KS" --gpu --jobs 4 --out "$OUT/adversarial.md" "${only[@]}" >"$OUT/adversarial.log" 2>&1
echo "adversarial rc=$?"
tail -60 "$OUT/adversarial.md"
