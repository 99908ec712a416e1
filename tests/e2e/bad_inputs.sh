#!/usr/bin/env bash
# End-to-end: bad problems and configs give clear errors naming the file, the line and the fix
# (`kernelsmith eval` and `kernelsmith evolve` on the cpu backend). About 30 s on 2 cores.
# Usage: tests/e2e/bad_inputs.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
data=tests/e2e/data/bad_inputs
cand=$data/candidate.py
seed=examples/colsum/cpu_seed.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source tests/e2e/lib.sh
fast="--backend cpu --trials 1"

# Problems: exit 2 (input error) with the file, the line or the call, and what to do.
check syntax-error 2 \
  "problem $data/syntax_error.py, line 8, column [0-9]+: SyntaxError: unmatched '\)': \`return x.sum\(dim=0\)\)\`; fix the Python syntax at line 8 of $data/syntax_error.py" -- \
  "$KS" eval $data/syntax_error.py $cand $fast --no-timing
check missing-names 2 "$data/missing_names.py: this problem file does not define \`get_inputs\`, \`get_init_inputs\` \(a KernelBench problem defines" -- \
  "$KS" eval $data/missing_names.py $cand $fast
check inputs-none 2 "problem $data/returns_none.py: get_inputs\(\) .*returned None \(a missing \`return\`\?\); it must return a list of Model.forward's positional arguments" -- \
  "$KS" eval $data/returns_none.py $cand $fast --no-timing
check inputs-dict 2 "problem $data/returns_dict.py: get_inputs\(\) .*returned a dict; it must return a list" -- \
  "$KS" eval $data/returns_dict.py $cand $fast --no-timing
check absurd-size 2 "problem $data/absurd_size.py: get_inputs\(\) .*would allocate 4096.00 GiB of inputs but only [0-9.]+ GiB is available on cpu; make the inputs smaller" -- \
  "$KS" eval $data/absurd_size.py $cand $fast --no-timing
# Ints and lists next to tensors are fine where the reference takes them.
check scalar-inputs-allowed 1 'correct +1/1 trials' -- \
  "$KS" eval $data/scalar_inputs.py $cand $fast --no-timing

# evolve stops after the seed when the problem itself is broken, instead of running rounds of
# identical failures.
check evolve-broken-problem 2 "error: problem $data/returns_dict.py: get_inputs\(\) .*returned a dict" -- \
  "$KS" evolve $data/returns_dict.py --seed-kernel $seed $fast --islands 1 --rounds 5 \
  --run-dir "$tmp/broken"
check evolve-broken-problem-one-eval 0 '^1$' -- sqlite3 "$tmp/broken/run.db" "select count(*) from evaluations"
# Only --resume may leave the problem out (the run keeps its own).
check evolve-no-problem 2 'give the problem file: kernelsmith evolve PROBLEM.py' -- \
  "$KS" evolve --seed-kernel $seed --run-dir "$tmp/none"

# Config files: YAML and JSON syntax errors with line and column, unknown keys with the
# valid ones.
printf 'rounds: 3\nbackend: cpu\nislands: [1, 2\n' >"$tmp/broken.yaml"
check yaml-syntax 2 "broken.yaml: not valid YAML \(line 4, column 1\).*fix line 4" -- \
  "$KS" evolve examples/colsum/problem.py --seed-kernel $seed --config "$tmp/broken.yaml" --run-dir "$tmp/y"
printf 'rounds: 3\n  islands: 2\n' >"$tmp/indent.yaml"
check yaml-indent 2 "indent.yaml: not valid YAML \(line 2, column [0-9]+\): .*\`islands: 2\`; fix line 2" -- \
  "$KS" evolve examples/colsum/problem.py --seed-kernel $seed --config "$tmp/indent.yaml" --run-dir "$tmp/y2"
printf '{\n  "rounds": 3,\n  "islands" 2\n}\n' >"$tmp/broken.json"
check json-syntax 2 "broken.json: not valid JSON \(line 3, column [0-9]+\): \`\"islands\" 2\`; fix line 3" -- \
  "$KS" evolve examples/colsum/problem.py --seed-kernel $seed --config "$tmp/broken.json" --run-dir "$tmp/j"
printf 'round: 3\n' >"$tmp/typo.yaml"
check unknown-key 2 "typo.yaml: unknown key \"round\" \(did you mean \"rounds\"\?\); valid keys: seed_kernel, backend, proposer, rounds, .*python" -- \
  "$KS" evolve examples/colsum/problem.py --seed-kernel $seed --config "$tmp/typo.yaml" --run-dir "$tmp/t"

if [ "$failures" -ne 0 ]; then
  echo "e2e bad_inputs: $failures failure(s)"
  exit 1
fi
echo "e2e bad_inputs: all passed"
