#!/usr/bin/env bash
# Reward throughput of `kernelsmith serve` on a GPU machine: rewards per second (and per GPU)
# with N concurrent clients posting /v1/reward batches on examples/softmax (Triton). Prints a
# markdown table and writes OUT_DIR/serve-throughput.md and the raw JSON lines.
# Usage, from the repo root of a built checkout:
#   bench/serve/run.sh [KS_BIN] [OUT_DIR]
# Environment: CLIENTS="1 4 16" BATCH=8 SECONDS_PER_LEVEL=60 GPUS=all SLOTS_PER_GPU=2 PORT=8089
set -u
KS=$(realpath "${1:-build/kernelsmith}")
OUT=${2:-bench-out/serve}
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
CLIENTS=${CLIENTS:-"1 4 16"}
BATCH=${BATCH:-8}
SECONDS_PER_LEVEL=${SECONDS_PER_LEVEL:-60}
GPUS=${GPUS:-all}
SLOTS_PER_GPU=${SLOTS_PER_GPU:-2}
PORT=${PORT:-8089}
url=http://127.0.0.1:$PORT

"$KS" serve --backend triton --gpus "$GPUS" --slots-per-gpu "$SLOTS_PER_GPU" --port "$PORT" \
  --max-queue 4096 >"$OUT/serve.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 1 600); do
  curl -sf "$url/healthz" >"$OUT/healthz.json" 2>/dev/null && break
  kill -0 $pid 2>/dev/null || { cat "$OUT/serve.log"; exit 1; }
  sleep 0.5
done
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$GPUS" != all ] && ngpu=$(echo "$GPUS" | tr ',' '\n' | wc -l)
[ "${ngpu:-0}" -ge 1 ] || ngpu=1
device=$(python3 -c "import json; print(json.load(open('$OUT/healthz.json'))['device'].get('name', '?'))")
slots=$(python3 -c "import json; print(json.load(open('$OUT/healthz.json'))['slots'])")

# Warm-up: compiles the Triton variants once and measures the parent (cached afterwards).
python3 bench/serve/load.py --url "$url" --clients 2 --batch 13 --seconds 1 >"$OUT/warmup.json"

: >"$OUT/levels.jsonl"
for n in $CLIENTS; do
  python3 bench/serve/load.py --url "$url" --clients "$n" --batch "$BATCH" \
    --seconds "$SECONDS_PER_LEVEL" | tee -a "$OUT/levels.jsonl"
done
curl -s "$url/metrics" >"$OUT/metrics.txt"

python3 - "$OUT" "$ngpu" "$device" "$slots" <<'PY' | tee "$OUT/serve-throughput.md"
import json, sys
out, ngpu, device, slots = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
print(f"kernelsmith serve reward throughput — {device} x{ngpu}, {slots} worker slots, "
      "examples/softmax (Triton), /v1/reward\n")
print("| clients | batch | rewards | rewards/s | rewards/s/GPU | p50 request s | p99 request s "
      "| ok | parse_error | other | 429s |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for line in open(f"{out}/levels.jsonl"):
    r = json.loads(line)
    st = dict(r["statuses"])
    ok, pe = st.pop("ok", 0), st.pop("parse_error", 0)
    print(f"| {r['clients']} | {r['batch']} | {r['rewards']} | {r['rewards_per_s']:.2f} | "
          f"{r['rewards_per_s'] / ngpu:.2f} | {r['p50_s']:.2f} | {r['p99_s']:.2f} | {ok} | {pe} "
          f"| {sum(st.values())} {st if st else ''} | {r['refused_429']} |")
PY
