#!/usr/bin/env bash
# End-to-end test of the evaluation cluster (docs/cluster.md) on the cpu backend: a real
# redis-server (password, append-only persistence) and `kernelsmith worker` processes, each in
# its own network namespace with a veth pair to the Redis host ("hosts"), or as processes on
# loopback where `ip netns` is not available (the script says which).
# Checks: a bench through the cluster gives the verdicts of the local pool; kill -9 of one
# worker host mid-run, a Redis restart mid-run and a worker that joins late still leave every
# candidate with exactly one result and no duplicate rows; `cluster status`; a run with no
# live worker says so and waits.
# Usage: tests/e2e/cluster.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
source tests/e2e/lib.sh
suite=$tmp/suite
tests/e2e/make-suite.sh "$suite"
fast="--backend cpu --trials 2 --islands 1 --parallel-proposals 2 --problems 1_*"
export KS_REDIS_PASSWORD=e2e-secret-$$
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
tag=ks$$
worker_pids=()
netns=0
if ip netns add "${tag}h0" 2>/dev/null; then ip netns del "${tag}h0"; netns=1; fi

cleanup() {
  for p in "${worker_pids[@]}"; do pkill -KILL -P "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
  [ -n "${redis_pid:-}" ] && kill -9 "$redis_pid" 2>/dev/null
  if [ $netns = 1 ]; then
    for h in 1 2 3; do ip netns del "${tag}h$h" 2>/dev/null; done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

binds="127.0.0.1"
if [ $netns = 1 ]; then
  echo "cluster: worker hosts are network namespaces joined to the Redis host by veth pairs"
  for h in 1 2 3; do
    ns=${tag}h$h
    ip netns add "$ns"
    ip link add "${tag}v$h" type veth peer name "${tag}p$h"
    ip link set "${tag}p$h" netns "$ns"
    ip addr add "10.197.$h.1/24" dev "${tag}v$h"
    ip link set "${tag}v$h" up
    ip -n "$ns" addr add "10.197.$h.2/24" dev "${tag}p$h"
    ip -n "$ns" link set "${tag}p$h" up
    ip -n "$ns" link set lo up
    binds="$binds 10.197.$h.1"
  done
else
  echo "cluster: 'ip netns' is not available here; worker hosts are processes on loopback"
fi

start_redis() {
  redis-server --port "$port" --bind $binds --requirepass "$KS_REDIS_PASSWORD" \
    --dir "$tmp" --appendonly yes --appendfsync always --save '' \
    --logfile "$tmp/redis.log" &
  redis_pid=$!
  for _ in $(seq 100); do
    redis-cli -p "$port" -a "$KS_REDIS_PASSWORD" --no-auth-warning ping 2>/dev/null | grep -q PONG && return
    sleep 0.1
  done
  fail "redis-server did not start" "$tmp/redis.log"
}
start_redis
url=redis://127.0.0.1:$port

# start_worker H: worker host H (its namespace, reaching Redis over its veth pair).
start_worker() {
  local h=$1 run=() wurl=$url
  if [ $netns = 1 ]; then run=(ip netns exec "${tag}h$h"); wurl=redis://10.197.$h.1:$port; fi
  "${run[@]}" "$KS" worker --queue "$wurl" --backend cpu --name "h$h" --visibility-timeout 4 \
    >"$tmp/worker$h.log" 2>&1 &
  worker_pids[$h]=$!
}

db_count() { sqlite3 "$1" "$2" 2>/dev/null || echo 0; }

# 1. No live worker: the run says so and waits.
check cluster-no-worker 124 'waiting for a worker on .*none is live; start one' -- \
  timeout 4 "$KS" bench "$suite" $fast --rounds 1 --run-dir "$tmp/none" --queue "$url"

# 2. Bad URL and a wrong password are clear errors.
check cluster-bad-url 2 'not a Redis URL' -- "$KS" bench "$suite" $fast --queue "http://x" \
  --run-dir "$tmp/bad"
check cluster-bad-password 2 'AUTH failed' -- env KS_REDIS_PASSWORD=wrong \
  "$KS" cluster status --queue "$url"

# 3. The local pool's verdicts, for comparison.
check cluster-local-bench 0 '^overall +1 +0 +100\.0%' -- \
  "$KS" bench "$suite" $fast --rounds 4 --run-dir "$tmp/local"

# 4. Two worker hosts, then a bench through them with a host killed, a late host and a Redis
# restart in the middle.
start_worker 1
start_worker 2
for _ in $(seq 150); do
  "$KS" cluster status --queue "$url" --json 2>/dev/null | grep -q '"slots": 2' && break
  sleep 0.2
done
check cluster-status 0 'workers 2 +slots 2' -- "$KS" cluster status --queue "$url"
# serve's /metrics adds the cluster's figures, read from Redis at each scrape.
sport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$KS" serve --queue "$url" --port "$sport" >"$tmp/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$sport/healthz" >/dev/null && break; sleep 0.2; done
curl -s "http://127.0.0.1:$sport/metrics" >"$tmp/metrics"
kill -TERM "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null
check cluster-metrics 0 '^ok$' -- bash -c "grep -qx 'ks_cluster_up 1' '$tmp/metrics' &&
  grep -qx 'ks_cluster_workers 2' '$tmp/metrics' && grep -qx 'ks_cluster_slots 2' '$tmp/metrics' &&
  grep -qx '# TYPE ks_cluster_queue_depth gauge' '$tmp/metrics' && echo ok || cat '$tmp/metrics'"
"$KS" bench "$suite" $fast --rounds 4 --run-dir "$tmp/cl" --queue "$url" >"$tmp/bench.out" 2>&1 &
bench_pid=$!
db=$tmp/cl/problems/level1/1_ColSum/run.db
for _ in $(seq 300); do [ "$(db_count "$db" 'select count(*) from evaluations')" -ge 2 ] && break; sleep 0.2; done
pkill -KILL -P "${worker_pids[1]}" 2>/dev/null; kill -9 "${worker_pids[1]}"  # host 1 dies
start_worker 3                                                               # host 3 joins
for _ in $(seq 300); do [ "$(db_count "$db" 'select count(*) from evaluations')" -ge 5 ] && break; sleep 0.2; done
redis-cli -p "$port" -a "$KS_REDIS_PASSWORD" --no-auth-warning shutdown >/dev/null 2>&1
wait "$redis_pid" 2>/dev/null
sleep 1
start_redis
if timeout 300 tail --pid="$bench_pid" -f /dev/null; then wait "$bench_pid"; rc=$?; else rc=124; fi
check cluster-bench 0 '^overall +1 +0 +100\.0%' -- cat "$tmp/bench.out"
[ $rc = 0 ] && ok "cluster-bench-exit" || fail "cluster-bench-exit: $rc" "$tmp/bench.out"

# Same verdicts as the local pool: every evaluation ok, the problem finished with 4 rounds.
for run in local cl; do
  d=$tmp/$run/problems/level1/1_ColSum
  printf '%s %s\n' "$(db_count "$d/run.db" "select group_concat(distinct status) from evaluations")" \
    "$(grep -o '"rounds_done": [0-9]*' "$d/summary.json")" >"$tmp/verdict.$run"
done
if cmp -s "$tmp/verdict.local" "$tmp/verdict.cl"; then
  ok "cluster-same-verdicts ($(cat "$tmp/verdict.cl"))"
else
  fail "cluster-same-verdicts: local '$(cat "$tmp/verdict.local")' cluster '$(cat "$tmp/verdict.cl")'"
fi
# Exactly one result per candidate: every program evaluated once, no program without one.
progs=$(db_count "$db" "select count(*) from programs")
evals=$(db_count "$db" "select count(*) from evaluations")
distinct=$(db_count "$db" "select count(distinct program_id) from evaluations")
if [ "$progs" -ge 5 ] && [ "$evals" = "$progs" ] && [ "$distinct" = "$evals" ]; then
  ok "cluster-one-result-each ($evals evaluations of $progs programs)"
else
  fail "cluster-one-result-each: programs $progs evaluations $evals distinct $distinct"
fi
by=$(db_count "$db" "select group_concat(distinct json_extract(result, '\$.evaluated_by')) from evaluations")
case ",$by," in
  *,h3,*) ok "cluster-late-worker-gets-work (evaluated by $by)" ;;
  *) fail "cluster-late-worker-gets-work: evaluated by '$by'" "$tmp/worker3.log" ;;
esac

# 5. Clean SIGTERM: the worker leaves the status.
kill -TERM "${worker_pids[2]}"
if timeout 30 tail --pid="${worker_pids[2]}" -f /dev/null; then
  check cluster-sigterm 0 'stopped' -- cat "$tmp/worker2.log"
else
  fail "cluster-sigterm: worker 2 still running 30 s after SIGTERM" "$tmp/worker2.log"
fi
"$KS" cluster status --queue "$url" >"$tmp/status.out" 2>&1
if grep -q '^  h3 ' "$tmp/status.out" && ! grep -q '^  h2 ' "$tmp/status.out"; then
  ok "cluster-status-after-sigterm"
else
  fail "cluster-status-after-sigterm: h3 live and h2 gone expected" "$tmp/status.out"
fi

exit $((failures > 0))
