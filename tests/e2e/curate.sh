#!/usr/bin/env bash
# End-to-end tests of `kernelsmith curate` with the real Python package (kernelsmith_curate,
# CPU torch) on the hand-made repository tests/e2e/data/curate/minirepo: modules across
# helpers, an exact duplicate, a renamed duplicate, a near-duplicate, one that needs third-party
# code (einops), one that never runs, a file that does not parse and a tests/ folder (skipped).
# Then: the output is a suite `kernelsmith bench` discovers, every problem passes the
# evaluator's correctness stage on the cpu backend, --resume redoes nothing, and a run killed
# with -9 resumes to the same result. A few minutes on 2 cores.
# Usage: tests/e2e/curate.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=tests/e2e/data/curate/minirepo
out=$tmp/cur
opts="--jobs 2 --timeout 30 --min-cluster-size 2"

source tests/e2e/lib.sh

# 1. A full run: the summary line, then every output file.
check curate-run 0 'files scanned 7 +modules found' -- "$KS" curate $src -o "$out" $opts
cp "$tmp/out" "$tmp/run.out"
check curate-outputs 0 '^ok$' -- python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
mods = [json.loads(l) for l in open(os.path.join(out, "modules.jsonl"))]
by = {}
for m in mods:  # the first module of each class name (ids follow file order)
    if m["class"]:
        by.setdefault(m["class"], m)
s = json.load(open(os.path.join(out, "summary.json")))
def need(cond, what):
    if not cond:
        raise SystemExit("FAILED: " + what + "\n" + json.dumps(s, indent=1))
need("ToyForTests" not in by, "tests/ is skipped")
need(all(m["repo"] == "minirepo" for m in mods), "repo is the basename of the root")
need(by["TanhGELU"]["status"] == "ok" and by["TanhGELU"]["license"] == "LICENSE", "TanhGELU ok, license")
glu = by["GatedLinearUnit"] if by["GatedLinearUnit"]["status"] == "ok" else None
need(glu is not None, "GatedLinearUnit (the first copy) kept: " + json.dumps(by["GatedLinearUnit"]))
dups = [m for m in mods if m["class"] == "GatedLinearUnit" and m["status"] == "duplicate"]
need(len(dups) == 1 and dups[0]["merged_into"] == glu["id"], "verbatim copy merged")
need(dups[0]["reason"].startswith("exact duplicate of"), "copy is exact")
need(by["SigmoidGate"]["status"] == "duplicate" and by["SigmoidGate"]["merged_into"] == glu["id"]
     and by["SigmoidGate"]["reason"].startswith("exact"), "renamed copy merged by AST hash")
near = by["ScaledRMSNorm"]
need(near["status"] == "duplicate" and near["merged_into"] == by["RMSNorm"]["id"]
     and 0.7 <= near["jaccard"] < 1 and "near-duplicate" in near["reason"], "near-duplicate merged")
need(by["EinopsMixer"]["status"] == "rejected" and by["EinopsMixer"]["stage"] == "extract"
     and "einops" in by["EinopsMixer"]["reason"], "third-party import rejected")
need(by["NotImplementedBlock"]["status"] == "rejected"
     and by["NotImplementedBlock"]["stage"] == "inputs", "module that never runs rejected")
files = [m for m in mods if m["class"] is None]
need(len(files) == 1 and files[0]["file"] == "minirepo/broken.py", "syntax error recorded")
ok = [m for m in mods if m["status"] == "ok"]
need(s["executable"] == len(ok) >= 5, "executable count")
need(s["exact_duplicates"] == 2 and s["near_duplicates"] == 1, "duplicate counts")
need(s["unique"] == s["self_contained"] - 3, "unique = self-contained - merged")
for m in ok:
    p = os.path.join(out, m["problem"])
    need(os.path.isfile(p) and m["problem"] == "problems/%s/%d_%s.py" % (m["family"], m["id"], m["class"]),
         "problem file " + m["problem"])
    need(m["runtime_us"] is not None and m["runtime_us"] > 0, "runtime recorded")
    text = open(p).read()
    need("def get_inputs" in text and "def get_init_inputs" in text and "Model" in text, "KernelBench format")
c = json.load(open(os.path.join(out, "clusters.json")))
need(c["method"] == "tfidf+hdbscan", "cluster method")
for seed in c["seeds"]:
    need(os.path.isfile(os.path.join(out, seed["seed"])), "seed copied")
need(s["clusters"] == len(c["clusters"]), "cluster count")
print("ok")
PY

# 2. The output is a suite: bench discovers every problem in its family folder (the tuner has
#    no seed kernels, so each is listed as skipped), and each problem passes the evaluator's
#    correctness stage on the cpu backend (a candidate that reuses the reference: the audit
#    flags it as hacked, which is expected; correctness is what proves the problem runs).
n=$(find "$out/problems" -name '*.py' | wc -l)
check curate-bench-discovers 0 "^\[$n/$n\] .*skipped: no seed kernel" -- \
  "$KS" bench "$out/problems" --backend cpu --rounds 0 --run-dir "$tmp/bench"
bad=0
for p in $(find "$out/problems" -name '*.py' | sort); do
  cand=$tmp/cand_$(basename "$p")
  { cat "$p"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } >"$cand"
  "$KS" eval "$p" "$cand" --backend cpu --trials 2 --no-timing --json >"$tmp/eval.json" 2>"$tmp/eval.err"
  if ! python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["stages"]["correctness"]; assert c["ok"], c' "$tmp/eval.json" 2>>"$tmp/eval.err"; then
    fail "curate-eval $p" "$tmp/eval.err"
    bad=$((bad + 1))
  fi
done
[ $bad -eq 0 ] && ok "curate-eval: $n problem(s) pass correctness on cpu"

# 3. --resume redoes nothing; a fresh run into a used directory is refused.
check curate-resume 0 'inputs: 0 module\(s\) to run' -- "$KS" curate $src -o "$out" $opts --resume
cp "$tmp/out" "$tmp/resume.out"
check curate-resume-extract 0 'extract: 7 Python file\(s\) in 1 source dir\(s\), 0 to do' -- cat "$tmp/resume.out"
check curate-resume-same 0 '^same$' -- python3 -c '
import json, sys
a = [l.split("executable")[1] for l in open(sys.argv[1]) if l.startswith("files scanned")]
b = [l.split("executable")[1] for l in open(sys.argv[2]) if l.startswith("files scanned")]
print("same" if a[0].split("wall")[0] == b[0].split("wall")[0] else (a, b))' "$tmp/run.out" "$tmp/resume.out"
check curate-dir-taken 2 'already holds a curate run' -- "$KS" curate $src -o "$out"
check curate-no-out 2 'required' -- "$KS" curate $src
check curate-bad-src 2 'not a directory' -- "$KS" curate "$tmp/nope" -o "$tmp/x"
check curate-llm-needs-model 2 'needs both --llm-url' -- "$KS" curate $src -o "$tmp/y" --llm-url http://127.0.0.1:9/v1
# --embed without a model stops before anything is stored, saying what to do (the model the
# extra ships is used by python/tests/curate/test_curate_cluster.py).
check curate-embed-missing 2 'KS_EMBED_MODEL=/nonexistent is not a directory' -- \
  env KS_EMBED_MODEL=/nonexistent "$KS" curate $src -o "$tmp/embed" --embed
[ ! -e "$tmp/embed/curate.db" ] && ok curate-embed-missing-stores-nothing ||
  fail "curate-embed-missing-stores-nothing: $tmp/embed/curate.db was written"

# 4. kill -9 during the inputs stage, then --resume: the same modules come out.
"$KS" curate $src -o "$tmp/k" $opts --inputs-batch 1 >"$tmp/kill.out" 2>&1 &
pid=$!
for _ in $(seq 1 240); do
  n_in=$(sqlite3 "$tmp/k/curate.db" "select count(*) from inputs" 2>/dev/null || echo 0)
  [ "${n_in:-0}" -ge 2 ] && break
  sleep 0.5
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
before=$(sqlite3 "$tmp/k/curate.db" "select count(*) from inputs" 2>/dev/null || echo 0)
check curate-resume-killed 0 'files scanned 7' -- "$KS" curate $src -o "$tmp/k" $opts --resume
cp "$tmp/out" "$tmp/killed.out"
check curate-resume-killed-log 0 "inputs: [0-9]+ module\(s\) to run \($before done earlier\)" -- cat "$tmp/killed.out"
check curate-resume-killed-same 0 '^same$' -- python3 -c '
import json, sys
def st(d): return sorted((m["id"], m["status"], m["merged_into"]) for m in map(json.loads, open(d + "/modules.jsonl")))
print("same" if st(sys.argv[1]) == st(sys.argv[2]) else (st(sys.argv[1]), st(sys.argv[2])))' "$out" "$tmp/k"

if [ "$failures" -ne 0 ]; then
  echo "e2e curate: $failures failure(s)"
  exit 1
fi
echo "e2e curate: all passed"
