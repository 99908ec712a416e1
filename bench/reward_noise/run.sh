#!/usr/bin/env bash
# Noise of a reward: the same parent/child pair rewarded N times by `kernelsmith serve`.
# "interleaved" is the reward as served (/v1/reward: the child timed against the parent in one
# worker, interleaved); "ratio of two" is what a reward made of two separate evaluations
# would be (/v1/evaluate of the child and of the parent, each against the reference, divided).
# Usage: bash bench/reward_noise/run.sh KS_BIN OUT_DIR [--backend triton|cpu] [--n N]
#   KS_REWARD_DEADLINE_S: stop sending after this many seconds (default 300)
set -u
KS=$(realpath "${1:?usage: run.sh KS_BIN OUT_DIR [--backend B] [--n N]}")
OUT=${2:?usage: run.sh KS_BIN OUT_DIR [--backend B] [--n N]}
shift 2
backend=triton n=20
while [ $# -gt 0 ]; do
  case $1 in
    --backend) backend=${2:?}; shift ;;
    --n) n=${2:?}; shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.."
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
gpus=()
[ "$backend" = triton ] && gpus=(--gpus 0)
"$KS" serve --backend "$backend" "${gpus[@]}" --port "$port" --request-timeout 600 \
  >"$OUT/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { echo "serve exited; see $OUT/serve.log" >&2; exit 1; }
  sleep 0.2
done
python3 bench/reward_noise/noise.py --url "http://127.0.0.1:$port" --backend "$backend" \
  --n "$n" --deadline-s "${KS_REWARD_DEADLINE_S:-300}" --out "$OUT"
