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
# Its best kernels are re-measured at the end (the only bench here that does it: lib.sh sets
# KS_NO_VERIFY).
check bench-run 0 '^overall +2 +1 +100\.0%' -- \
  env -u KS_NO_VERIFY "$KS" bench $suite --rounds 2 --concurrency 2 $fast --run-dir "$tmp/b"
cp "$tmp/out" "$tmp/bench.out"
check bench-verify-line 0 '^\[verify 1/2\] level1/1_ColSum: [0-9.]+x \[' -- cat "$tmp/bench.out"
check bench-verify-table 0 '^  level1/2_ColSumNoSeed .*not verified: the problem was skipped' -- \
  cat "$tmp/bench.out"
check bench-verify-count 0 '^verified 1 of 2 problem' -- cat "$tmp/bench.out"
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
# the re-measurement sits beside the run's figure; the metrics keep the run's
v = rows["level1/1_ColSum"]["verify"]
summary = json.load(open(rows["level1/1_ColSum"]["run_dir"] + "/summary.json"))
assert v["state"] == "verified" and v["status"] == "ok", v
assert v["program_id"] == summary["best_program_id"], (v, summary)
assert v["recorded_speedup"] == rows["level1/1_ColSum"]["best_speedup"], v
lo, hi = v["speedup_ci95"]
assert lo <= v["speedup"] <= hi, v
ilo, ihi = v["independent_range"]
assert ilo <= v["independent_speedup"] <= ihi and v["independent_method"], v
assert isinstance(v["agree"], bool) and isinstance(v["recorded_within"], bool), v
assert v["reused"] is False, v
assert abs(b["overall"]["geomean_speedup"] - rows["level1/1_ColSum"]["best_speedup"]) < 1e-9
skipped = rows["level1/2_ColSumNoSeed"]["verify"]
assert skipped["state"] == "not_verified" and skipped["reason"] == "the problem was skipped", skipped
print("ok")
PY
check bench-problem-dir 0 'best.py' -- ls "$tmp/b/problems/level1/1_ColSum"
check bench-problem-verify-json 0 '^verify.json$' -- ls "$tmp/b/problems/level1/1_ColSum"
"$KS" report "$tmp/b" -o "$tmp/b.html" >/dev/null 2>&1
check bench-report-verified 0 '^ok$' -- python3 - "$tmp/b/bench.json" "$tmp/b.html" <<'PY'
import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["problems"]}
html = open(sys.argv[2]).read()
v = rows["level1/1_ColSum"]["verify"]
assert "<th>verified speedup</th>" in html
cell = "<td>%.3fx [%.3f, %.3f]</td>" % (v["speedup"], *v["speedup_ci95"])
assert cell in html, cell
assert "not verified: the problem was skipped" in html
print("ok")
PY

# Usage errors.
check bench-dir-taken 2 'already holds a bench' -- "$KS" bench $suite $fast --run-dir "$tmp/b"
check bench-bad-levels 2 'not a level number' -- "$KS" bench $suite --levels 1,x --run-dir "$tmp/x"
check bench-no-match 2 'no problem matches' -- "$KS" bench $suite --levels 3 --run-dir "$tmp/x"

# 2. Resume: a finished problem is not rerun, nor its best re-measured again.
cp "$tmp/b/problems/level1/1_ColSum/verify.json" "$tmp/verify.before"
check bench-resume-finished 0 '1_ColSum: finished, best .*finished earlier' -- \
  env -u KS_NO_VERIFY "$KS" bench $suite --resume --run-dir "$tmp/b"
cp "$tmp/out" "$tmp/resume.out"
check bench-resume-verified-earlier 0 '^\[verify 1/2\] level1/1_ColSum: .*\(verified earlier\)$' -- \
  cat "$tmp/resume.out"
check bench-resume-verify-kept 0 '^ok$' -- python3 - "$tmp/b" "$tmp/verify.before" <<'PY'
import json, sys
run, before = sys.argv[1], json.load(open(sys.argv[2]))
assert json.load(open(run + "/problems/level1/1_ColSum/verify.json")) == before, "re-measured"
v = {r["name"]: r for r in json.load(open(run + "/bench.json"))["problems"]}["level1/1_ColSum"]
v = v["verify"]
assert v["reused"] is True and v["speedup"] == before["speedup"], (v, before)
print("ok")
PY
# A suite file changed since: the run keeps its stored problem and bench says so.
cp "$suite/level1/1_ColSum.py" "$tmp/colsum.orig"
echo "# edited" >>"$suite/level1/1_ColSum.py"
check bench-resume-changed-problem-warns 0 'warning: .*1_ColSum.py differs from the problem' -- \
  "$KS" bench $suite --resume --run-dir "$tmp/b"
# (with --no-verify, through KS_NO_VERIFY: the stored re-measurement stays in bench.json)
check bench-no-verify-keeps-stored 0 '"state": "verified"' -- cat "$tmp/b/bench.json"
cp "$tmp/colsum.orig" "$suite/level1/1_ColSum.py"
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
# The seed file is gone meanwhile: the run goes on with the seed stored in its run.db.
mv "$suite/level1/1_ColSum.cpu.py" "$tmp/seed.orig"
check bench-resume-killed 0 '1_ColSum: finished, best' -- "$KS" bench $suite --resume --run-dir "$tmp/k"
cp "$tmp/out" "$tmp/killed.out"
check bench-no-verify-says-so 0 '^best kernels not re-measured \(--no-verify' -- cat "$tmp/killed.out"
mv "$tmp/seed.orig" "$suite/level1/1_ColSum.cpu.py"
check bench-resume-rounds 0 '"rounds_done": 5' -- cat "$tmp/k/problems/level1/1_ColSum/summary.json"
after=$(sqlite3 "$db" "select count(*) from evaluations")
if [ "${before:-0}" -lt 1 ] || [ "$after" -lt "$before" ]; then
  fail "bench-resume-kept: evaluations before $before after $after"
else
  echo "ok   bench-resume-kept ($before then $after evaluations)"
fi

# 4. An LLM bench sets up its client as evolve does: the prompts name the device the worker
# reports. Options come from --config (YAML) with flags winning: the config's prompt templates
# are used and its rounds give way to --rounds. Usage in bench.json matches the server's.
python3 tests/e2e/data/context_llm.py 65536 1 tests/e2e/data/replies/1.txt "$tmp/llm.log" \
  "$tmp/llm.port" &
llm_pid=$!
for _ in $(seq 50); do [ -f "$tmp/llm.port" ] && break; sleep 0.1; done
mkdir -p "$tmp/prompts/cpu"
{ echo "MARKER-FROM-BENCH-CONFIG"; cat prompts/cpu/user.md; } >"$tmp/prompts/cpu/user.md"
cat >"$tmp/bench.yaml" <<YAML
rounds: 3
prompts: $tmp/prompts
migration_interval: 7
price_in: 1.5
price_out: 6
YAML
check bench-llm-run 0 'LLM: [0-9]+ call.*cost \$' -- "$KS" bench $suite --rounds 1 $fast \
  --run-dir "$tmp/llm" --config "$tmp/bench.yaml" \
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
check bench-config-and-flags 0 '^ok$' -- python3 - "$tmp/llm" "$tmp/llm.log.requests" <<'PY'
import json, sys
run, requests = sys.argv[1], sys.argv[2]
bodies = [json.loads(line) for line in open(requests)]
evolution = [b for b in bodies if "# Current program" in b["messages"][-1]["content"]]
assert evolution, "no evolution prompt"
assert all("MARKER-FROM-BENCH-CONFIG" in b["messages"][-1]["content"] for b in evolution), \
    "the config's prompt templates were not used"
bench = json.load(open(run + "/bench.json"))
assert bench["protocol"]["rounds"] == 1 and bench["protocol"]["migration_interval"] == 7
problem = run + "/problems/level1/1_ColSum"
assert json.load(open(problem + "/run.json"))["config"]["migration_interval"] == 7
assert json.load(open(problem + "/summary.json"))["rounds_done"] == 1, "--rounds did not win"
print("ok")
PY
check bench-usage 0 '^ok$' -- python3 - "$tmp/llm" "$tmp/llm.log" tests/e2e/data/replies/1.txt <<'PY'
import json, sys
run, log, reply = sys.argv[1], sys.argv[2], sys.argv[3]
# what the server reported: usage of each answered request (its messages / 4, reply / 4)
statuses = [line.split()[1] for line in open(log)]
bodies = [json.loads(line) for line in open(log + ".requests")]
answered = [b for b, s in zip(bodies, statuses) if s == "200"]
prompt = sum(sum(len(m["content"]) for m in b["messages"]) // 4 for b in answered)
completion = len(answered) * (len(open(reply).read()) // 4)
bench = json.load(open(run + "/bench.json"))
u = bench["usage"]
assert u["calls"] == len(answered), (u, len(answered))
assert (u["prompt_tokens"], u["completion_tokens"]) == (prompt, completion), (u, prompt, completion)
assert u["tokens"] == "reported" and u["estimated_calls"] == 0, u
assert abs(u["cost_usd"] - (prompt * 1.5 + completion * 6) / 1e6) < 1e-9, u
assert u["latency_s_total"] > 0
rows = bench["problems"]
assert sum(r["llm"]["calls"] for r in rows) == u["calls"]
assert sum(r["llm"]["prompt_tokens"] for r in rows) == prompt
for r in rows:
    s = json.load(open(r["run_dir"] + "/summary.json"))["llm"]
    assert s["prompt_tokens"] == r["llm"]["prompt_tokens"] and s["cost_usd"] is not None, (s, r)
print("ok")
PY

# 5. The files proposer over a whole suite: every problem's prompts of a round land in one
# folder; bench exits 3 until they are answered; --resume evaluates the answers and writes the
# next round's prompts; after the last round the bench finishes.
files="--proposer files --exchange-dir $tmp/exchange"
check bench-files-waits 3 'waiting for 4 answers in .*--resume --run-dir' -- \
  "$KS" bench $suite --rounds 2 $fast $files --run-dir "$tmp/files"
answer_all() {  # answers every open prompt with the cpu seed at BLOCK = $1
  for p in "$tmp"/exchange/*.prompt.md; do
    a="${p%.prompt.md}.answer.md"
    [ -e "$a" ] && continue
    { echo 'Wider column blocks.'; echo '```python'
      sed "s/^BLOCK = 1 .*/BLOCK = $1/" examples/colsum/cpu_seed.py; echo '```'; } >"$a"
  done
}
check bench-files-round1-prompts 0 '^4$' -- sh -c "ls '$tmp/exchange' | grep -c 'r1-s[01].prompt.md'"
check bench-files-prompts-name-the-device 0 '^4$' -- \
  sh -c "grep -l 'cores)' '$tmp'/exchange/*-r1-*.prompt.md | wc -l"
answer_all 64
check bench-files-round2 3 'waiting for 4 answers' -- \
  "$KS" bench $suite --resume --run-dir "$tmp/files"
check bench-files-round2-prompts 0 '^4$' -- sh -c "ls '$tmp/exchange' | grep -c 'r2-s[01].prompt.md'"
answer_all 256
check bench-files-done 0 '^overall +2 +0 +100\.0%' -- \
  "$KS" bench $suite --resume --run-dir "$tmp/files"
check bench-files-json 0 '^ok$' -- python3 - "$tmp/files/bench.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
assert b["protocol"]["proposer"] == "files", b["protocol"]
for r in b["problems"]:
    assert r["status"] == "finished" and r["rounds_done"] == 2, r
    assert r["best_speedup"] > 0 and r["llm"]["calls"] == 4, r
u = b["usage"]
assert u["calls"] == 8 and u["tokens"] == "estimated" and u["estimated_calls"] == 8, u
assert u["prompt_tokens"] == u["estimated_prompt_tokens"] > 0 and u["cost_usd"] is None, u
print("ok")
PY

# A dead endpoint fails the problems quickly instead of spinning through rounds.
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
