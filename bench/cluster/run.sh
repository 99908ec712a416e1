#!/usr/bin/env bash
# Cluster dispatch benchmark: the same candidate evaluated through `kernelsmith serve` with a
# local pool and with --queue (a local redis-server and `kernelsmith worker` processes).
#   1. Dispatch overhead: sequential evaluations, one slot, local vs cluster (added ms each).
#   2. Throughput with 1, 2 and 4 workers (one slot each) vs the local pool of as many slots.
# Usage: bench/cluster/run.sh [build/kernelsmith] [cpu|triton] [N]
# On a GPU host: bench/cluster/run.sh build/kernelsmith triton 60 (workers get --gpus 0).
set -eu
KS=$(realpath "${1:-build/kernelsmith}")
backend=${2:-cpu}
n=${3:-30}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
gpu_flags=(); cand=()
if [ "$backend" != cpu ]; then
  gpu_flags=(--gpus 0)
  cand=(--problem examples/softmax/problem.py --candidate examples/softmax/triton_candidate.py)
fi

rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --dir "$tmp" --appendonly yes --save '' \
  --logfile "$tmp/redis.log" & pids+=($!)
sleep 0.5
queue=redis://127.0.0.1:$rport

serve() {  # serve ARGS...: starts serve, sets $url
  local port; port=$(free_port)
  "$KS" serve --backend "$backend" --port "$port" "$@" >"$tmp/serve.log" 2>&1 & serve_pid=$!
  url=http://127.0.0.1:$port
  for _ in $(seq 600); do curl -sf "$url/healthz" >/dev/null 2>&1 && return; sleep 0.2; done
  cat "$tmp/serve.log"; exit 1
}
stop_serve() { kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; }
workers() {  # workers K: starts K workers of one slot
  wpids=()
  for i in $(seq "$1"); do
    "$KS" worker --queue "$queue" --backend "$backend" "${gpu_flags[@]}" --name "w$i" \
      >"$tmp/w$i.log" 2>&1 & wpids+=($!)
  done
}
stop_workers() { kill "${wpids[@]}"; wait "${wpids[@]}" 2>/dev/null || true; }
run() { python3 bench/cluster/evals.py --url "$url" --backend "$backend" "${cand[@]}" "$@"; }

echo "date: $(date -u +%FT%TZ)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "command: bench/cluster/run.sh $* (backend $backend, n $n)"
echo "redis: $(redis-server --version | cut -d' ' -f3)"
# 1. Overhead: one slot each way; a warm-up round first.
serve --slots-per-gpu 1 "${gpu_flags[@]}"
run --n 3 >/dev/null
echo "local   1 slot  sequential: $(run --n "$n")"
stop_serve
workers 1
serve --queue "$queue"
run --n 3 >/dev/null
echo "cluster 1 worker sequential: $(run --n "$n")"
stop_serve
stop_workers
# 2. Throughput: K requests at once over K slots.
for k in 1 2 4; do
  serve --slots-per-gpu "$k" "${gpu_flags[@]}"
  run --n "$k" --clients "$k" >/dev/null
  echo "local   $k slot(s)  $k clients: $(run --n "$n" --clients "$k")"
  stop_serve
  workers "$k"
  serve --queue "$queue"
  run --n "$k" --clients "$k" >/dev/null
  echo "cluster $k worker(s) $k clients: $(run --n "$n" --clients "$k")"
  stop_serve
  stop_workers
done
