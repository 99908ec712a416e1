#!/usr/bin/env bash
# End-to-end tests of `kernelsmith evolve` on the cpu backend (about a minute on 2 cores).
# Usage: tests/e2e/evolve.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
data=tests/e2e/data
problem=examples/colsum/problem.py
seed=examples/colsum/cpu_seed.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fast="--backend cpu --trials 2 --islands 1"

source tests/e2e/lib.sh

sql() { sqlite3 "$1/run.db" "$2"; }

# 1. Tuner on the cpu backend: improves over the seed, best.py evaluates ok on its own; the
# best is re-measured at the end (the only run here that does it: lib.sh sets KS_NO_VERIFY).
check tuner-run 0 'best speedup: .*seed 0\.' -- \
  env -u KS_NO_VERIFY "$KS" evolve $problem --seed-kernel $seed --rounds 3 \
  --parallel-proposals 2 $fast --run-dir "$tmp/tuner"
cp "$tmp/out" "$tmp/tuner-run.out"
check tuner-remeasured 0 '^independent +[0-9.]+x .*\[wall_clock_loop\]' -- cat "$tmp/tuner-run.out"
check tuner-verdict 0 '^verdict +(agree|DIFFER)' -- cat "$tmp/tuner-run.out"
check tuner-verify-json 0 '"independent_speedup": [0-9]' -- cat "$tmp/tuner/verify.json"
check tuner-report-verify 0 'Re-measured in a fresh worker: evaluator [0-9.]+x' -- \
  sh -c "\"$KS\" report \"$tmp/tuner\" -o \"$tmp/tuner-report.html\" >/dev/null && cat \"$tmp/tuner-report.html\""
# A run directory carries its problem (in run.db): verify works on a copy made elsewhere.
check moved-run-verifies 0 '^independent +[0-9.]+x' -- \
  sh -c "cp -r '$tmp/tuner' '$tmp/moved' && cd / && '$KS' verify '$tmp/moved'; test \$? -ne 2"
check no-verify-flag 0 're-measure: +kernelsmith verify' -- \
  "$KS" evolve $problem --seed-kernel $seed --rounds 1 $fast --run-dir "$tmp/noverify" --no-verify
check tuner-best-evaluates 0 'status +ok' -- "$KS" eval $problem "$tmp/tuner/best.py" --trials 2
check tuner-summary 0 '"best_speedup": [0-9]' -- cat "$tmp/tuner/summary.json"
check tuner-improved 0 '^1$' -- python3 -c "import json; s=json.load(open('$tmp/tuner/summary.json')); print(int(s['best_speedup'] > s['seed_speedup']))"
check tuner-log 0 'new best' -- cat "$tmp/tuner/run.log"

# Usage errors.
check tuner-needs-seed 2 'needs a seed kernel' -- "$KS" evolve $problem --run-dir "$tmp/noseed"
check run-dir-taken 2 'already holds a run' -- \
  "$KS" evolve $problem --seed-kernel $seed --run-dir "$tmp/tuner"
printf '{"rounds": "three"}' >"$tmp/bad.json"
check bad-config 2 'wrong type' -- \
  "$KS" evolve $problem --seed-kernel $seed --config "$tmp/bad.json" --run-dir "$tmp/badcfg"

# 2. LLM-style proposer through --command, replaying prose without code, a diff, a broken
#    diff, a failing call and a rewrite; each unusable reply is answered once with its reason.
mkdir -p "$tmp/replay" && cp -r $data/replies "$tmp/replay/"
printf '{"rounds": 3, "parallel_proposals": 1}' >"$tmp/cmd.json"
check command-run 0 'best speedup' -- \
  "$KS" evolve $problem --seed-kernel $seed --config "$tmp/cmd.json" $fast \
  --command "bash $data/replay.sh $tmp/replay" --run-dir "$tmp/cmd"
check command-improved 0 '^1$' -- python3 -c "import json; s=json.load(open('$tmp/cmd/summary.json')); print(int(s['best_speedup'] > 2 * s['seed_speedup']))"
check command-calls-stored 0 '^5$' -- sql "$tmp/cmd" "select count(*) from llm_calls"
check command-reason-answered 0 'could not be applied: .*no code block' -- \
  sql "$tmp/cmd" "select request from llm_calls where id = 2"
check command-unusable-recorded 0 'unusable_reply|proposer_error' -- cat "$tmp/cmd/summary.json"

# 3. kill -9 during a run, then --resume: nothing completed lost, nothing evaluated twice; the
#    seed file gone meanwhile: the run goes on with the seed stored in its run.db.
cp $seed "$tmp/seed.py"
"$KS" evolve $problem --seed-kernel "$tmp/seed.py" --rounds 6 --parallel-proposals 2 $fast \
  --run-dir "$tmp/kill" >"$tmp/kill.out" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  n=$(sql "$tmp/kill" "select count(*) from evaluations" 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 3 ] && break
  sleep 0.5
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
rm "$tmp/seed.py"
before=$(sql "$tmp/kill" "select program_id from evaluations order by program_id" | tr '\n' ' ')
check resume-run 0 'best speedup' -- "$KS" evolve $problem --resume --run-dir "$tmp/kill"
after=$(sql "$tmp/kill" "select program_id from evaluations order by program_id" | tr '\n' ' ')
lost=0
for id in $before; do case " $after " in *" $id "*) ;; *) lost=1 ;; esac; done
if [ -z "$before" ] || [ $lost -ne 0 ]; then fail "resume-kept-evaluations: before [$before] after [$after]"; else echo "ok   resume-kept-evaluations (${before})"; fi
check resume-no-double 0 '^0$' -- sql "$tmp/kill" \
  "select count(*) from (select code_hash from programs join evaluations on id = program_id group by code_hash having count(*) > 1)"
check resume-no-pending 0 '^0$' -- sql "$tmp/kill" \
  "select count(*) from programs where id not in (select program_id from evaluations)"
check resume-rounds 0 '"rounds_done": 6' -- cat "$tmp/kill/summary.json"
# Extended without the problem file: the stored problem is evolved and re-measured.
check resume-stored-problem 0 're-measured in a fresh worker' -- \
  env -u KS_NO_VERIFY "$KS" evolve --resume --run-dir "$tmp/kill" --rounds 7

# 4. Files proposer: the run stores its state and waits for answers (exit 3); an answer file
#    with a diff, then --resume evaluates it.
check files-waits 3 'waiting for 1 answers in .*then run the same command with --resume' -- \
  "$KS" evolve $problem --seed-kernel $seed --proposer files --exchange-dir "$tmp/exchange" \
  --rounds 1 --parallel-proposals 1 $fast --run-dir "$tmp/files"
prompt=$(ls "$tmp"/exchange/*.prompt.md 2>/dev/null | head -1)
check files-prompt 0 'Current program' -- cat "${prompt:-/dev/null}"
check files-resume-still-waits 3 'waiting for 1 answers' -- \
  "$KS" evolve $problem --resume --run-dir "$tmp/files"
block_line=$(grep '^BLOCK = 1 ' $seed)
printf 'Wider blocks.\n<<<<<<< SEARCH\n%s\n=======\nBLOCK = 512\n>>>>>>> REPLACE\n' \
  "$block_line" >"${prompt%.prompt.md}.answer.md"
check files-resume 0 'best speedup' -- "$KS" evolve $problem --resume --run-dir "$tmp/files"
check files-evaluated 0 '^ok\|1$' -- sql "$tmp/files" \
  "select e.status, p.code like '%BLOCK = 512%' from programs p join evaluations e on e.program_id = p.id where p.proposer = 'files'"
check files-call-stored 0 '^files:' -- sql "$tmp/files" "select endpoint from llm_calls"

# 5. Flags: the tuner polishes between command calls (--tuner-ratio 1: it makes them all),
#    bad --llm specs and sampling ratios are usage errors.
check tuner-ratio 0 'best speedup' -- "$KS" evolve $problem --seed-kernel $seed --command false \
  --tuner-ratio 1 --migration-interval 2 --rounds 2 --parallel-proposals 1 $fast \
  --run-dir "$tmp/mixed"
check tuner-ratio-programs 0 '^0 [1-9]' -- sql "$tmp/mixed" \
  "select (select count(*) from llm_calls) || ' ' || (select count(*) from programs where proposer = 'tuner')"
check llm-spec 2 'expected URL,MODEL' -- \
  "$KS" evolve $problem --seed-kernel $seed --llm http://127.0.0.1:9/v1 --run-dir "$tmp/llmspec"
check sampling-ratios 2 'ratio' -- "$KS" evolve $problem --seed-kernel $seed --exploitation 0 \
  --exploration 0 --random 0 $fast --run-dir "$tmp/ratios"

if [ "$failures" -ne 0 ]; then
  echo "e2e evolve: $failures failure(s)"
  exit 1
fi
echo "e2e evolve: all passed"
