#!/usr/bin/env bash
# Multi-GPU scaling of evaluation on one host (bench/README.md, "scaling").
#
#   bash bench/scaling/run.sh KS_BIN OUT_DIR [throughput|neighbours|all]
#
# throughput: evaluations/s with 1, 2, 4 ... GPUs (powers of two up to the host's count)
#   - `serve --gpus 0..g-1` (local pool), bench/cluster/evals.py posting unique candidates
#   - the cluster path: a local redis-server, one `kernelsmith worker --gpus i` per GPU and
#     `serve --queue`, the same load
#   - `bench` with the tuner on four level-1 problems of the built-in suite, 1 GPU vs all
# neighbours: the timing CV of small and compute-heavy eval_timing workloads on GPU 0
#   (`eval --repeat N`), with the other GPUs idle and then running heavy evaluations
#   (matmul 4096^3 through `serve --gpus 1..`), with the GPUs' power and clocks sampled.
# Every figure goes to OUT_DIR (*.jsonl, summary.md) and OUT_DIR.tgz (one file: a device run
# may bring back only a few). redis-server: $REDIS_SERVER, else beside
# KS_BIN (scripts/device-bundle --redis), else on PATH.
#
# Environment: SLOTS_PER_GPU (2), N_PER_GPU (16 evaluations per GPU and level), REPEAT (10),
#   LEVELS (GPU counts, e.g. "1 4"; default powers of two and the host's count), BENCH_ROUNDS (3),
#   WORKLOADS (eval_timing workloads timed on GPU 0), KS_PYTHON (python3).
set -u
KS=$(realpath "${1:?usage: run.sh KS_BIN OUT_DIR [part]}")
mkdir -p "${2:?usage: run.sh KS_BIN OUT_DIR [part]}"
OUT=$(cd "$2" && pwd)
PART=${3:-all}
cd "$(dirname "$0")/../.." || exit 2
SLOTS=${SLOTS_PER_GPU:-2}
NPER=${N_PER_GPU:-16}
REPEAT=${REPEAT:-10}
PY=${KS_PYTHON:-python3}
REDIS=${REDIS_SERVER:-$(dirname "$KS")/redis-server}
[ -x "$REDIS" ] || REDIS=$(command -v redis-server || true)
ngpu=$(nvidia-smi -L | wc -l)
tmp=$(mktemp -d)
pids=()
cleanup() {  # also on a timeout: the summary of what was measured, and one archive of it all
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"
  "$PY" bench/scaling/summarize.py "$OUT" | tee "$OUT/summary.md"
  tar czf "$OUT.tgz" -C "$(dirname "$OUT")" "$(basename "$OUT")"
}
trap cleanup EXIT
trap 'exit 124' TERM INT
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
gpu_list() { seq -s, 0 $(($1 - 1)); }  # gpu_list G -> 0,1,...,G-1
if [ -n "${LEVELS:-}" ]; then
  read -r -a levels <<<"$LEVELS"
else
  levels=(); for g in 1 2 4 8 16; do [ "$g" -le "$ngpu" ] && levels+=("$g"); done
  [ "${levels[-1]}" = "$ngpu" ] || levels+=("$ngpu")
fi
SOFTMAX=(--problem examples/softmax/problem.py --candidate examples/softmax/triton_candidate.py)
W=bench/eval_timing/workloads
MATMUL=(--problem "$W/matmul_4096/problem.py" --candidate "$W/matmul_4096/candidate.py")

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(nproc) cores; $ngpu GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
  echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  echo "command: bench/scaling/run.sh $* (SLOTS_PER_GPU=$SLOTS N_PER_GPU=$NPER REPEAT=$REPEAT)"
  echo "redis: ${REDIS:-none} $("$REDIS" --version 2>/dev/null | cut -d' ' -f3)"
} | tee -a "$OUT/env.txt"

serve() {  # serve LOG ARGS...: starts serve, sets $url and $serve_pid
  local log=$1 port; shift; port=$(free_port)
  "$KS" serve --backend triton --port "$port" --max-queue 4096 "$@" >"$log" 2>&1 & serve_pid=$!
  url=http://127.0.0.1:$port
  for _ in $(seq 600); do curl -sf "$url/healthz" >/dev/null 2>&1 && return 0; sleep 0.2; done
  tail -20 "$log"; return 1
}
stop() { kill "$@" 2>/dev/null; wait "$@" 2>/dev/null || true; }
evals() { "$PY" bench/cluster/evals.py --url "$url" --backend triton "$@"; }
level() {  # level MODE G: warm-up, then the measured load; one JSON line to throughput.jsonl
  local mode=$1 g=$2 slots=$(($2 * SLOTS))
  evals "${SOFTMAX[@]}" --n "$slots" --clients "$slots" >/dev/null
  local r; r=$(evals "${SOFTMAX[@]}" --n $((NPER * g)) --clients $((2 * slots)) \
    --dump "$OUT/stages_${mode}_$g.jsonl")
  echo "{\"mode\": \"$mode\", \"gpus\": $g, \"slots_per_gpu\": $SLOTS, \"result\": $r}" \
    | tee -a "$OUT/throughput.jsonl"
}

throughput() {
  local rport queue g i wp
  rport=$(free_port)
  "$REDIS" --port "$rport" --bind 127.0.0.1 --dir "$tmp" --appendonly yes --save '' \
    --logfile "$tmp/redis.log" & pids+=($!)
  sleep 0.5
  queue=redis://127.0.0.1:$rport
  for g in "${levels[@]}"; do
    serve "$OUT/serve_local_$g.log" --gpus "$(gpu_list "$g")" --slots-per-gpu "$SLOTS" || continue
    level local "$g"
    stop "$serve_pid"
    wp=()
    for i in $(seq 0 $((g - 1))); do
      "$KS" worker --queue "$queue" --backend triton --gpus "$i" --slots-per-gpu "$SLOTS" \
        --name "gpu$i" >"$OUT/worker_${g}_$i.log" 2>&1 & wp+=($!)
    done
    serve "$OUT/serve_cluster_$g.log" --queue "$queue" && level cluster "$g"
    stop "$serve_pid"; stop "${wp[@]}"
  done
  # bench with the tuner: the same four problems on one GPU and on all.
  for g in 1 "$ngpu"; do
    local t0=$SECONDS dir="$tmp/bench_$g"
    timeout 150 "$KS" bench suites/kernelsmith --levels 1 --problems '1[0-3]_*' --rounds "${BENCH_ROUNDS:-3}" \
      --proposer tuner --backend triton --gpus "$(gpu_list "$g")" --parallel-evals $((g * SLOTS)) \
      --concurrency 4 --run-dir "$dir" >"$OUT/bench_$g.log" 2>&1
    local rc=$? wall=$((SECONDS - t0))
    local n; n=$("$PY" -c 'import sqlite3,sys,glob; print(sum(sqlite3.connect(p).execute("select count(*) from evaluations").fetchone()[0] for p in glob.glob(sys.argv[1]+"/**/run.db", recursive=True)))' "$dir")
    echo "{\"mode\": \"bench\", \"gpus\": $g, \"rc\": $rc, \"wall_s\": $wall, \"evaluations\": $n}" \
      | tee -a "$OUT/throughput.jsonl"
  done
}

repeat_evals() {  # repeat_evals TAG: eval --repeat on GPU 0 for each workload
  local w
  for w in ${WORKLOADS:-softmax_16x16384 layernorm_4096x1024 relu_16x16384 matmul_4096}; do
    CUDA_VISIBLE_DEVICES=0 timeout 150 "$KS" eval $W/$w/problem.py $W/$w/candidate.py \
      --backend triton --repeat "$REPEAT" --json >"$OUT/neighbours_$1_$w.jsonl" 2>>"$OUT/neighbours_$1.log"
  done
}

neighbours() {
  local smi
  nvidia-smi --query-gpu=index,power.draw,clocks.sm,temperature.gpu --format=csv,noheader -lms 1000 \
    >"$OUT/power.csv" 2>&1 & smi=$!
  echo "idle $(date -u +%T)" >>"$OUT/phases.txt"
  repeat_evals idle
  if [ "$ngpu" -gt 1 ]; then
    serve "$OUT/serve_neighbours.log" --gpus "$(seq -s, 1 $((ngpu - 1)))" --slots-per-gpu "$SLOTS"
    local heavy=$serve_pid
    ( while :; do evals "${MATMUL[@]}" --n 64 --clients $((4 * (ngpu - 1))) >>"$OUT/neighbour_load.jsonl" || sleep 1; done ) &
    local loader=$!
    sleep 20  # neighbours busy before GPU 0 is timed
    echo "loaded $(date -u +%T)" >>"$OUT/phases.txt"
    repeat_evals loaded
    echo "end $(date -u +%T)" >>"$OUT/phases.txt"
    stop "$loader"; pkill -f bench/cluster/evals.py; stop "$heavy"
  fi
  stop "$smi"
}

case $PART in
  throughput) throughput ;;
  neighbours) neighbours ;;
  all) throughput; neighbours ;;
  *) echo "part: throughput | neighbours | all" >&2; exit 2 ;;
esac
