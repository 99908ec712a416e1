#!/usr/bin/env bash
# End-to-end tests of `kernelsmith serve` on the cpu backend: every endpoint over real HTTP,
# concurrent clients, a full queue (429), malformed JSON (400), an oversized body (413),
# OpenRLHF's /get_reward contract, the Python adapters, and a clean SIGTERM shutdown.
# Usage: tests/e2e/serve.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT

source tests/e2e/lib.sh

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
"$KS" serve --backend cpu --port "$port" --max-queue 2 --trials 1 --max-body-mb 1 \
  --request-timeout 300 >"$tmp/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  curl -sf "$url/healthz" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.2
done
check healthz 0 '"backend":"cpu".*"status":"ok"' -- curl -sf "$url/healthz"

# Request bodies built from the examples: colsum's cpu seed is the parent.
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
problem = open("examples/colsum/problem.py").read()
seed = open("examples/colsum/cpu_seed.py").read()
truth = json.dumps({"problem_id": "colsum", "reference_code": problem, "parent_code": seed,
                    "backend": "cpu", "parent_speedup": 0.5})
line = "BLOCK = 1  # ks:tune BLOCK=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]\n"
def diff(old, new):
    return f"Larger blocks.\n```\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n"
faster = diff(line, "BLOCK = 256\n")
wrong = diff("        return y\n", "        return y[:1].expand_as(y).contiguous()\n")
json.dump({"problem_source": problem, "candidate_source": seed, "problem_path": "colsum.py"},
          open(f"{tmp}/evaluate.json", "w"))
json.dump({"items": [{"completion": faster, "ground_truth": truth},
                     {"completion": "I would tile it.", "ground_truth": truth},
                     {"completion": wrong, "ground_truth": truth}]},
          open(f"{tmp}/reward.json", "w"))
prompt = "<|user|>make colsum faster<|assistant|>"
json.dump({"query": [prompt + faster, prompt + "no code"], "prompts": [prompt, prompt],
           "labels": [truth, truth]}, open(f"{tmp}/openrlhf.json", "w"))
json.dump({"truth": truth, "faster": faster}, open(f"{tmp}/parts.json", "w"))
open(f"{tmp}/big.json", "w").write(json.dumps({"items": [], "pad": "x" * (2 << 20)}))
PY

post() { curl -s -o "$tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary "@$1" "$url$2"; echo; cat "$tmp/body"; }

# 1. /v1/evaluate: the seed against the reference, an EvalResult back. One more request where
#    the first verdict is not ok (once, on a loaded 2-core CI machine, this honest seed came back
#    hacked; the message of such a first verdict is printed so that it can be read).
post "$tmp/evaluate.json" /v1/evaluate >"$tmp/evaluate.out"
if ! grep -Eq '"status": ?"ok"' "$tmp/body"; then
  echo "evaluate: first verdict not ok, asked again: $(python3 -c "import json; r=json.load(open('$tmp/body')); print(r.get('status'), (r.get('message') or '')[:600])" 2>&1)"
  post "$tmp/evaluate.json" /v1/evaluate >"$tmp/evaluate.out"
fi
check evaluate 0 '^200$' -- head -1 "$tmp/evaluate.out"
check evaluate-result 0 '"status": "ok".*"speedup": [0-9]' -- \
  python3 -c "import json; r=json.load(open('$tmp/body')); print(json.dumps({k: r[k] for k in ('status', 'speedup', 'message')})[:600])"

# 2. /v1/reward: a faster child earns its speedup over the parent, timed against it here; prose and a
#    wrong kernel earn 0.
post "$tmp/reward.json" /v1/reward >"$tmp/reward.out"
check reward-http 0 '^200$' -- head -1 "$tmp/reward.out"
check reward-values 0 '^ok interleaved >1 ci \| parse_error 0 \| (incorrect|hacked) 0$' -- python3 -c "
import json; r=json.load(open('$tmp/body'))['results']
a, b, c = r
print(a['status'], a['parent_baseline'], '>1' if a['reward'] > 1 else a['reward'],
      'ci' if len(a['speedup_vs_parent_ci95'] or []) == 2 else 'no-ci', '|',
      b['status'], int(b['reward']), '|', c['status'], int(c['reward']))"

# 3. OpenRLHF's remote reward model contract.
post "$tmp/openrlhf.json" /get_reward >"$tmp/openrlhf.out"
check openrlhf-http 0 '^200$' -- head -1 "$tmp/openrlhf.out"
check openrlhf-contract 0 '^2 2 correct,parsed,speedup,speedup_vs_parent 1 0$' -- python3 -c "
import json; r=json.load(open('$tmp/body'))
assert r['rewards'] == r['scores']
print(len(r['rewards']), len(r['scores']), ','.join(sorted(r['extra_logs'])),
      int(r['rewards'][0] > 1), int(r['rewards'][1]))"

# 4. Malformed JSON, a bad field, an oversized body, an unknown route.
printf '{"items": [' >"$tmp/bad.json"
post "$tmp/bad.json" /v1/reward >"$tmp/bad.out"
check malformed-json 0 '^400$' -- head -1 "$tmp/bad.out"
check malformed-json-message 0 'malformed JSON at byte' -- cat "$tmp/body"
printf '{"items": [{"completion": "x"}]}' >"$tmp/field.json"
post "$tmp/field.json" /v1/reward >"$tmp/field.out"
check missing-field 0 '^400$' -- head -1 "$tmp/field.out"
check missing-field-message 0 'items\[0\].ground_truth: missing' -- cat "$tmp/body"
post "$tmp/big.json" /v1/reward >"$tmp/big.out"
check oversized-body 0 '^413$' -- head -1 "$tmp/big.out"
check oversized-message 0 'max-body-mb' -- cat "$tmp/body"
check unknown-route 0 '^404$' -- curl -s -o /dev/null -w '%{http_code}' "$url/v2/nothing"

# 5. Concurrent clients through the Python adapter (it waits out 429s), then a burst without
#    retries against --max-queue 2 and one worker slot: some requests get 429 + Retry-After.
# The plumbing is what is checked here: every reward is a real (non-zero) evaluation. Its size
# is CPU timing of child and parent in separate evaluations, too noisy under load for "> 1".
check concurrent-clients 0 '^8 rewards, all > 0$' -- env PYTHONPATH=python KS_REWARD_URL=$url python3 -c "
import json
from concurrent.futures import ThreadPoolExecutor
from kernelsmith.rewards import compute_score, make_trl_reward
p = json.load(open('$tmp/parts.json'))
with ThreadPoolExecutor(8) as ex:
    r = list(ex.map(lambda i: compute_score('kernelsmith', p['faster'], p['truth']), range(6)))
r += make_trl_reward()([p['faster']] * 2, label=[p['truth']] * 2)
print(f'{len(r)} rewards, all > 0' if all(x > 0 for x in r) else r)"
check queue-full 0 '429 with Retry-After' -- python3 -c "
import json, urllib.request, urllib.error
from concurrent.futures import ThreadPoolExecutor
body = open('$tmp/evaluate.json', 'rb').read()
def call(_):
    req = urllib.request.Request('$url/v1/evaluate', data=body, headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return (r.status, None)
    except urllib.error.HTTPError as e:
        return (e.code, e.headers.get('Retry-After'))
with ThreadPoolExecutor(8) as ex:
    got = list(ex.map(call, range(8)))
codes = sorted(c for c, _ in got)
assert 200 in codes, codes
print('429 with Retry-After' if any(c == 429 and ra for c, ra in got) else codes)"

# 6. Metrics.
curl -s "$url/metrics" >"$tmp/metrics"
check metrics-evaluations 0 'ks_evaluations_total\{status="ok"\} [0-9]+' -- cat "$tmp/metrics"
check metrics-429 0 'ks_requests_total\{code="429",endpoint="/v1/evaluate"\} [1-9]' -- cat "$tmp/metrics"
check metrics-queue 0 '^ks_queue_depth 0$' -- cat "$tmp/metrics"
check metrics-latency 0 'ks_evaluation_seconds_bucket\{le="\+Inf"\} [1-9]' -- cat "$tmp/metrics"
# timed evaluations held the (CPU) device for their timing: a positive total
check metrics-device-seconds 0 '^ks_device_seconds_total 0*[.]?0*[1-9]' -- cat "$tmp/metrics"
# the cpu backend ran no GPU work: the counter is there and stays 0
check metrics-gpu-seconds 0 '^ks_gpu_seconds_total 0$' -- cat "$tmp/metrics"
check metrics-parent-cache 0 'ks_parent_cache_hits_total [1-9]' -- cat "$tmp/metrics"

# 7. Python adapters against the real service.
check python-adapters 0 'passed' -- env KS_SERVE_BINARY="$KS" \
  bash -c "cd python && python3 -m pytest -q -p no:cacheprovider tests/test_rewards_client.py"

# 8. SIGTERM: a clean, prompt shutdown.
kill -TERM $pid
for _ in $(seq 1 150); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
if kill -0 $pid 2>/dev/null; then
  fail "shutdown: still running 30 s after SIGTERM" "$tmp/serve.log"
else
  wait $pid
  rc=$?
  pid=
  [ $rc -eq 0 ] && grep -q 'stopped' "$tmp/serve.log" && ok "sigterm-shutdown" ||
    fail "sigterm-shutdown: exit $rc" "$tmp/serve.log"
fi
check port-released 0 'refused|Failed to connect|Couldn' -- bash -c "curl -sS $url/healthz 2>&1; true"

# Usage errors.
check bad-gpus 2 'not a GPU index' -- "$KS" serve --gpus x --backend cpu
check bad-reward 2 'reward' -- "$KS" serve --reward linear

echo "serve e2e: $failures failure(s)"
[ $failures -eq 0 ]
