#!/usr/bin/env bash
# Fault corpus through the CLI: tests/faults/run.sh BINARY [--gpu]
# Without --gpu: the CPU entries of manifest.json (cpu backend) except those marked cli:false.
# With --gpu: only the GPU entries (triton backend), on a machine with a CUDA GPU.
# Each candidate is evaluated by `BINARY eval` (a fresh pool) and must get a status from its
# `expect` list and a message containing `message`; then an honest candidate must pass.
# Without --gpu, the curate entries as well: one `BINARY curate` run over the folder of
# modules that attack it (the manifest's "curate" section).
# Prints "faults survived X/Y"; exit 0 when X == Y.
set -u
bin=${1:?usage: tests/faults/run.sh BINARY [--gpu]}
gpu=0
[ "${2:-}" = "--gpu" ] && gpu=1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'kill $listener 2>/dev/null; rm -rf "$tmp"' EXIT

# A loopback listener for the network fault; it records any connection it gets.
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); open(sys.argv[1], "a").write("connected\n"); c.close()
' "$tmp/connections" > "$tmp/port" &
listener=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
export KS_FAULT_PORT=$(cat "$tmp/port")
export KS_FAULT_OUTSIDE=$tmp/outside
mkdir -p "$KS_FAULT_OUTSIDE"

python3 - "$here/manifest.json" "$gpu" > "$tmp/cases" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
gpu = sys.argv[2] == "1"
for f in m["faults"]:
    if f.get("gpu", False) != gpu or (not gpu and f.get("cli", True) is False):
        continue
    print("\t".join([f["file"], f["backend"], ",".join(f["expect"]), f.get("message", "")]))
PY

# The follow-up that proves the replaced worker still serves: on the backend under test.
honest_backend=cpu honest_file=honest.py
[ "$gpu" = 1 ] && honest_backend=triton honest_file=honest_triton.py
[ -s "$tmp/cases" ] || { echo "faults: no entries selected from $here/manifest.json" >&2; exit 2; }
survived=0
total=0
while IFS=$'\t' read -r file backend expect message; do
  total=$((total + 1))
  "$bin" eval "$here/problem.py" "$here/$file" --backend "$backend" --trials 2 --no-timing \
      --json > "$tmp/result.json" 2> "$tmp/stderr"
  status=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' \
      "$tmp/result.json" 2>/dev/null || echo "no-result")
  msg=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("message",""))' \
      "$tmp/result.json" 2>/dev/null)
  "$bin" eval "$here/problem.py" "$here/candidates/$honest_file" --backend "$honest_backend" \
      --trials 2 --no-timing > "$tmp/honest" 2>&1
  honest=$?
  if [[ ",$expect," == *",$status,"* && "$msg" == *"$message"* && $honest -eq 0 ]]; then
    survived=$((survived + 1))
    echo "ok   $file: $status"
  else
    echo "FAIL $file: status $status (want $expect), message: ${msg:0:300}, honest exit $honest"
    tail -5 "$tmp/stderr" | sed 's/^/    /'
  fi
done < "$tmp/cases"

# Curate: the modules are built and run by `curate`'s tool in its sandbox.
if [ "$gpu" = 0 ]; then
  "$bin" curate "$here/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["curate"]["root"])' \
      "$here/manifest.json")" -o "$tmp/curate" --jobs 1 --timeout 10 > "$tmp/curate.out" 2>&1
  curate_rc=$?
  python3 - "$here/manifest.json" "$tmp/curate" "$curate_rc" > "$tmp/curate.verdicts" <<'PY'
import json, os, sys
m = json.load(open(sys.argv[1]))["curate"]
out, rc = sys.argv[2], int(sys.argv[3])
try:  # "file" is relative to the curated root; the manifest's paths to tests/faults
    mods = {m["root"] + "/" + r["file"]: r
            for r in map(json.loads, open(os.path.join(out, "modules.jsonl")))}
except OSError:
    mods = {}
for f in m["faults"]:
    r = mods.get(f["file"], {})
    text = f"{r.get('reason')} {r.get('last_error')}"
    ok = rc == 0 and r.get("status") == "rejected" and f["message"] in text
    print(("ok  " if ok else "FAIL") + f" curate {f['file']}: {r.get('status', 'no record')}"
          + ("" if ok else f" (want rejected with '{f['message']}'): {text[:300]}"))
h = mods.get(m["honest"], {})
print(("ok  " if rc == 0 and h.get("status") == "ok" else "FAIL")
      + f" curate {m['honest']} after the faults: {h.get('status', 'no record')} (curate exit {rc})")
PY
  cat "$tmp/curate.verdicts"
  [ "$curate_rc" -eq 0 ] || tail -5 "$tmp/curate.out" | sed 's/^/    /'
  total=$((total + $(grep -c . "$tmp/curate.verdicts")))
  survived=$((survived + $(grep -c '^ok' "$tmp/curate.verdicts")))
  if [ -e "$KS_FAULT_OUTSIDE/curate-escape" ]; then
    echo "FAIL a curated module wrote outside its scratch directory"; survived=$((survived - 1))
  fi
fi

if [ -e "$KS_FAULT_OUTSIDE/run.db" ]; then
  echo "FAIL a candidate wrote outside its scratch directory"; survived=$((survived - 1))
fi
if [ -s "$tmp/connections" ]; then
  echo "FAIL a candidate reached the network"; survived=$((survived - 1))
fi
echo "faults survived $survived/$total"
[ "$survived" -eq "$total" ]
