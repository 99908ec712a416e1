# Round 14 (written without running: no evaluation on the loaded CPU VM) on the GPU host: each
# entry evaluated through the CLI with timing; c06 with --repeat 2. Into $OUT.
set -u
export KS_RESOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
mkdir -p $OUT/r14
python3 - <<'PY' > /tmp/r14.tsv
import json
for e in json.load(open("tests/adversarial/v14/r14.json"))["entries"]:
    rep = "2" if "c06" in e["id"] else "1"
    print("\t".join([e["id"], e["file"], e["problem"], e["backend"], rep]))
PY
run_one() {
  IFS=$'\t' read -r id file problem backend rep <<<"$1"
  timeout 240 .devbundle/kernelsmith eval "$problem" "$file" --backend "$backend" --json \
    --repeat "$rep" > "$OUT/r14/$id.json" 2> "$OUT/r14/$id.log"
  echo "$id rc=$?"
}
export -f run_one; export OUT
tr '\n' '\0' < /tmp/r14.tsv | xargs -0 -P 5 -I{} bash -c 'run_one "$1"' _ {}
python3 - <<'PY'
import json, glob, os
for f in sorted(glob.glob(os.environ["OUT"] + "/r14/*.json")):
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except Exception:
            continue
        rej = [(x["kind"], x.get("detail", "")[:110]) for x in r.get("findings", []) if x.get("severity") == "reject"]
        t = (r.get("stages") or {}).get("timing") or {}
        print(os.path.basename(f)[:55], r.get("status"), r.get("speedup") and round(r["speedup"], 3),
              "checks", t.get("timed_checks"), t.get("checked"), rej[:2], (r.get("message") or "")[:160])
PY
