#!/usr/bin/env bash
# End-to-end: `kernelsmith evolve --proposer llm` against an endpoint that is not there. The
# run evaluates its seed, tries a bounded number of calls (each retried with backoff), stores
# every failed call with its error, and stops with a clear message instead of spinning through
# its rounds; the run stays resumable. The scripted faults (429, 500, timeouts, malformed or
# enormous replies, ...) are covered over loopback HTTP by the gtest
# src/engine/engine_llm_faults_test.cc. About 30 s on 2 cores.
# Usage: tests/e2e/llm_faults.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
problem=examples/colsum/problem.py
seed=examples/colsum/cpu_seed.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source tests/e2e/lib.sh

sql() { sqlite3 "$1/run.db" "$2"; }

# A loopback port nothing listens on: bound, then released.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port/v1"

start=$(date +%s)
check dead-endpoint-stops 1 \
  "error: the run cannot go on: LLM endpoint $url unreachable after 3 attempts: .*is the server running\?.*check --llm-url; once it answers again, continue with --resume" -- \
  "$KS" evolve $problem --seed-kernel $seed --proposer llm --llm-url "$url" --model m \
  --backend cpu --trials 1 --islands 1 --rounds 40 --run-dir "$tmp/dead"
wall=$(($(date +%s) - start))
# 4 calls in flight (the default), each 4 attempts with 2 + 4 + 8 s of backoff (+-25 %), and
# the worker's start and the seed's evaluation: far from 40 rounds of retries.
if [ $wall -lt 120 ]; then ok "dead-endpoint-bounded (${wall} s)"; else fail "dead endpoint took ${wall} s"; fi
check dead-calls-recorded 0 '^[34] [34]$' -- sql "$tmp/dead" \
  "select count(*) || ' ' || sum(error like '%gave up after 4 attempts%') from llm_calls"
check dead-seed-kept 0 '^ok$' -- sql "$tmp/dead" "select status from evaluations"
check dead-run-failed 0 '^failed$' -- sql "$tmp/dead" "select status from runs"
check dead-summary 0 '"rounds_done": 0' -- cat "$tmp/dead/summary.json"
# Resuming against the still-dead endpoint stops the same way and evaluates nothing twice.
check dead-resume-stops 1 'the run cannot go on' -- \
  "$KS" evolve $problem --resume --run-dir "$tmp/dead"
check dead-resume-no-double 0 '^1 1$' -- sql "$tmp/dead" \
  "select (select count(*) from programs) || ' ' || (select count(*) from evaluations)"

# A URL that is not http(s) is a usage error before anything runs.
check bad-url 2 "must start with http:// or https://" -- \
  "$KS" evolve $problem --seed-kernel $seed --llm-url "127.0.0.1:$port/v1" --model m \
  --backend cpu --run-dir "$tmp/badurl"

# A server with a 16K context (vLLM's default for many models) and evolve's default max_tokens
# of 32768: the context is read from /v1/models and max_tokens capped, or (a server that does
# not say) the first rejection is fitted from its message, the call retried once, and the
# context it named used for the calls after it.
context_run() {  # NAME ADVERTISE
  rm -f "$tmp/$1.port"
  python3 tests/e2e/data/context_llm.py 16384 "$2" tests/e2e/data/replies/1.txt "$tmp/$1.log" \
    "$tmp/$1.port" &
  local pid=$!
  for _ in $(seq 50); do [ -f "$tmp/$1.port" ] && break; sleep 0.1; done
  check "$1-run" 0 'best speedup' -- "$KS" evolve $problem --seed-kernel $seed \
    --llm-url "http://127.0.0.1:$(cat "$tmp/$1.port")/v1" --model m --backend cpu --trials 1 \
    --islands 1 --rounds 1 --parallel-proposals 1 --run-dir "$tmp/$1"
  # a seed that was not ok: its stored verdict, to say why (the message and reject findings)
  sql "$tmp/$1" "select status, json_extract(result, '$.message'), json_extract(result,
    '$.findings') from evaluations where status != 'ok'" 2>/dev/null | cut -c1-1500
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
context_run ctx-advertised 1
check ctx-advertised-capped 0 '^([1-9][0-9]*) \1 0$' -- awk \
  '{n++; if ($1 <= 16384) fit++; if ($2 == 400) bad++} END {print n, fit, bad+0}' \
  "$tmp/ctx-advertised.log"
context_run ctx-unadvertised 0
check ctx-unadvertised-shrunk 0 '^32768 400 [0-9]+ 200( [0-9]+ 200)*$' -- sh -c \
  "tr '\n' ' ' <'$tmp/ctx-unadvertised.log' | sed 's/ $//'"

if [ "$failures" -ne 0 ]; then
  echo "e2e llm_faults: $failures failure(s)"
  exit 1
fi
echo "e2e llm_faults: all passed"
