#!/usr/bin/env bash
# End-to-end tests of `kernelsmith bench` on the cpu backend with the tuner (under a minute on
# 2 cores). The suite (tests/e2e/make-suite.sh) holds one problem with a cpu seed and one without
# (skipped under the tuner).
# Usage: tests/e2e/bench.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
suite=$tmp/suite
tests/e2e/make-suite.sh "$suite"
fast="--backend cpu --trials 2 --islands 1 --parallel-proposals 2"

source tests/e2e/lib.sh

# 1. A bench of 2 rounds, both problems at once: the table, bench.json with the named metrics.
check bench-run 0 '^overall +2 +1 +100\.0%' -- \
  "$KS" bench $suite --rounds 2 --concurrency 2 $fast --run-dir "$tmp/b"
cp "$tmp/out" "$tmp/bench.out"
check bench-table 0 '^level1 +2 +1 ' -- cat "$tmp/bench.out"
check bench-skipped 0 '2_ColSumNoSeed: skipped: no seed kernel' -- cat "$tmp/bench.out"
check bench-json 0 '^ok$' -- python3 - "$tmp/b/bench.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
names = ["corr", "fast_1.0", "fast_1.2", "fast_1.5", "fast_2.0", "avg_amsr", "geomean_speedup"]
for group in (b["levels"]["1"], b["overall"]):
    for n in names:
        assert n in group and n + "_round1" in group, n
    assert group["corr"] == 1.0 and group["attempted"] == 1 and group["skipped"] == 1, group
    assert len(group["series"]) == 3, group["series"]
rows = {r["name"]: r for r in b["problems"]}
assert rows["level1/1_ColSum"]["status"] == "finished", rows
assert rows["level1/1_ColSum"]["best_speedup"] > 0
assert rows["level1/2_ColSumNoSeed"]["status"] == "skipped"
assert b["series"]["overall"] == b["overall"]["series"]
print("ok")
PY
check bench-problem-dir 0 'best.py' -- ls "$tmp/b/problems/level1/1_ColSum"

# Usage errors.
check bench-dir-taken 2 'already holds a bench' -- "$KS" bench $suite $fast --run-dir "$tmp/b"
check bench-bad-levels 2 'not a level number' -- "$KS" bench $suite --levels 1,x --run-dir "$tmp/x"
check bench-no-match 2 'no problem matches' -- "$KS" bench $suite --levels 3 --run-dir "$tmp/x"

# 2. Resume: a finished problem is not rerun.
check bench-resume-finished 0 '1_ColSum: finished, best .*finished earlier' -- \
  "$KS" bench $suite --resume --run-dir "$tmp/b"
# ... and it runs the problems it was started with: other filters are refused.
check bench-resume-filters 2 "started with ''; leave --levels out" -- \
  "$KS" bench $suite --resume --run-dir "$tmp/b" --levels 1

# 3. kill -9 during a problem's run, then --resume: the engine resumes it to the end.
"$KS" bench $suite --problems '1_*' --rounds 5 $fast --run-dir "$tmp/k" >"$tmp/kill.out" 2>&1 &
pid=$!
db="$tmp/k/problems/level1/1_ColSum/run.db"
for _ in $(seq 1 120); do
  n=$(sqlite3 "$db" "select count(*) from evaluations" 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 3 ] && break
  sleep 0.5
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
before=$(sqlite3 "$db" "select count(*) from evaluations")
check bench-resume-killed 0 '1_ColSum: finished, best' -- "$KS" bench $suite --resume --run-dir "$tmp/k"
check bench-resume-rounds 0 '"rounds_done": 5' -- cat "$tmp/k/problems/level1/1_ColSum/summary.json"
after=$(sqlite3 "$db" "select count(*) from evaluations")
if [ "${before:-0}" -lt 1 ] || [ "$after" -lt "$before" ]; then
  fail "bench-resume-kept: evaluations before $before after $after"
else
  echo "ok   bench-resume-kept ($before then $after evaluations)"
fi

# 4. An LLM bench sets up its client as evolve does: the prompts name the device the worker
# reports, and a dead endpoint fails the problems quickly instead of spinning through rounds.
python3 tests/e2e/data/context_llm.py 65536 1 tests/e2e/data/replies/1.txt "$tmp/llm.log" \
  "$tmp/llm.port" &
llm_pid=$!
for _ in $(seq 50); do [ -f "$tmp/llm.port" ] && break; sleep 0.1; done
check bench-llm-run 0 'overall' -- "$KS" bench $suite --rounds 1 $fast --run-dir "$tmp/llm" \
  --llm-url "http://127.0.0.1:$(cat "$tmp/llm.port")/v1" --model m
kill "$llm_pid" 2>/dev/null
wait "$llm_pid" 2>/dev/null
check bench-prompts-name-the-device 0 '^ok$' -- python3 - "$tmp/llm.log.requests" <<'PY'
import json, sys
bodies = [json.loads(line) for line in open(sys.argv[1])]
text = [" ".join(m["content"] for m in b["messages"]) for b in bodies]
assert bodies and not any("the target device" in t for t in text), "a prompt without the device"
assert all("cores)" in t for t in text), "the worker's CPU is not named"
print("ok")
PY
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start=$(date +%s)
check bench-dead-endpoint 1 'the run cannot go on: LLM endpoint .* unreachable' -- \
  "$KS" bench $suite --rounds 40 $fast --run-dir "$tmp/dead" \
  --llm-url "http://127.0.0.1:$port/v1" --model m
wall=$(($(date +%s) - start))
if [ "$wall" -gt 120 ]; then fail "bench-dead-endpoint-quick: ${wall}s"; else ok "bench-dead-endpoint-quick (${wall}s)"; fi

if [ "$failures" -ne 0 ]; then
  echo "e2e bench: $failures failure(s)"
  exit 1
fi
echo "e2e bench: all passed"
