#!/usr/bin/env bash
# End-to-end tests of the CLI on the built-in example (CPU; Triton through its interpreter).
# Usage: tests/e2e/run.sh path/to/kernelsmith
set -u
KS=${1:-build/kernelsmith}
cd "$(dirname "$0")/../.."
ex=examples/softmax
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source tests/e2e/lib.sh

check help 0 'eval' -- "$KS" --help
check eval-help 0 'Exit status' -- "$KS" eval --help
# ok, and no GPU work on the cpu backend (gpu_seconds 0)
check cpu-candidate-ok 0 '"gpu_seconds":0(\.0)?,.*"status":"ok"' -- \
  "$KS" eval $ex/problem.py $ex/cpu_candidate.py --backend cpu --json
check cpu-report 0 'status +ok' -- "$KS" eval $ex/problem.py $ex/cpu_candidate.py
check torch-candidate-hacked 1 '"status":"hacked"' -- \
  "$KS" eval $ex/problem.py $ex/torch_candidate.py --backend cpu --json
check torch-candidate-finding 1 'reject\] torch_compute: .*aten._softmax' -- \
  "$KS" eval $ex/problem.py $ex/torch_candidate.py --backend cpu
check triton-needs-gpu 2 'TRITON_INTERPRET=1' -- \
  env -u TRITON_INTERPRET "$KS" eval $ex/problem.py $ex/triton_candidate.py --backend triton
check triton-interpreter-ok 0 '"status":"ok"' -- \
  env TRITON_INTERPRET=1 "$KS" eval $ex/problem.py $ex/triton_candidate.py --backend triton \
  --trials 2 --no-timing --json
check missing-file 2 'nope.py' -- "$KS" eval $ex/problem.py "$tmp/nope.py"
printf 'import torch\nclass Model(torch.nn.Module):\n    pass\n' >"$tmp/bad_problem.py"
check problem-without-get-inputs 2 'bad_problem.py.*`get_inputs`' -- \
  "$KS" eval "$tmp/bad_problem.py" $ex/cpu_candidate.py
check candidate-without-modelnew 2 'problem.py.*`ModelNew`' -- \
  "$KS" eval $ex/problem.py $ex/problem.py
check bad-flag 2 'backend' -- "$KS" eval $ex/problem.py $ex/cpu_candidate.py --backend tpu
check repeat 0 'evaluation 2/2' -- \
  "$KS" eval $ex/problem.py $ex/cpu_candidate.py --backend cpu --repeat 2 --trials 2
check baseline-duel 0 'vs .*cpu_candidate.py +[0-9.]+x .*timed against it' -- \
  "$KS" eval $ex/problem.py $ex/cpu_candidate.py --backend cpu --trials 2 \
  --baseline $ex/cpu_candidate.py
check baseline-needs-timing 2 'drop --no-timing' -- \
  "$KS" eval $ex/problem.py $ex/cpu_candidate.py --backend cpu --no-timing \
  --baseline $ex/cpu_candidate.py

# verify: the evaluator's figure and the independent method's, both present; exit 0 when they
# agree, 1 when they differ (a CPU timing on a shared machine may), never anything else.
"$KS" verify $ex/problem.py $ex/cpu_candidate.py --backend cpu --json >"$tmp/verify.json" 2>"$tmp/verify.err"
rc=$?
if [ "$rc" -le 1 ] && python3 - "$tmp/verify.json" "$rc" <<'PYEOF'
import json, sys
v = json.loads(open(sys.argv[1]).read())
assert v["status"] == "ok", v
assert v["speedup"] > 0 and v["independent_speedup"] > 0, v
assert v["independent_method"] == "wall_clock_loop", v
assert len(v["speedup_ci95"]) == 2 and len(v["independent_range"]) == 2, v
assert v["agree"] == (sys.argv[2] == "0"), v
PYEOF
then ok verify-both-figures; else fail "verify-both-figures: exit $rc" "$tmp/verify.err"; fi
check verify-report 0 'independent +[0-9.]+x .*wall_clock_loop' -- bash -c \
  "'$KS' verify $ex/problem.py $ex/cpu_candidate.py --backend cpu; true"
check verify-not-a-run 2 'not a run directory' -- "$KS" verify "$tmp"
check verify-needs-candidate 2 'PROBLEM.py and CANDIDATE.py' -- "$KS" verify $ex/problem.py
sed 's/^        return y$/        return y.flip(1)/' \
  $ex/cpu_candidate.py >"$tmp/wrong_candidate.py"  # the right values in the wrong columns
check verify-incorrect 1 'verify +(incorrect|hacked)' -- "$KS" verify $ex/problem.py \
  "$tmp/wrong_candidate.py" --backend cpu

if [ "$failures" -ne 0 ]; then
  echo "e2e: $failures failure(s)"
  exit 1
fi
echo "e2e: all passed"
