#!/usr/bin/env bash
# End-to-end tests of `kernelsmith export` (docs/export.md): two real runs on the cpu backend
# with a scripted LLM (`--proposer command` replaying tests/e2e/data/export/*), exported as SFT
# and RL datasets whose schema, filters and contents are checked against the run databases.
# Usage: tests/e2e/export.sh path/to/kernelsmith
# KS_UPDATE_FIXTURES=1 also copies the exported files to tests/e2e/data/export/fixture/ (the
# Python test python/tests/test_export_datasets.py loads them).
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
data=tests/e2e/data/export
problem=examples/colsum/problem.py
seed=examples/colsum/cpu_seed.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fast="--backend cpu --trials 2 --islands 1 --parallel-proposals 1"

source tests/e2e/lib.sh

# py NAME 'python code' : the code runs with `sft`, `rl`, `rl_all` (lists of rows), `db(run)`
# (a sqlite3 connection) and `problem` (the problem's text) defined; it prints "ok" when the
# check holds.
py() {
  local name=$1
  check "$name" 0 '^ok$' -- python3 - "$tmp" "$problem" "$2" <<'PYEOF'
import json, sqlite3, sys
tmp, problem_path, code = sys.argv[1], sys.argv[2], sys.argv[3]
def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f]
sft = load(f"{tmp}/sft.jsonl")
rl = load(f"{tmp}/rl.jsonl")
rl_all = load(f"{tmp}/rl_all.jsonl")
sft_summary = json.load(open(f"{tmp}/sft.summary.json"))
def db(run):
    return sqlite3.connect(f"{tmp}/{run}/run.db")
def run_db(run_id):
    for run in ("seeded", "translate"):
        if db(run).execute("select 1 from runs where id = ?", (run_id,)).fetchone():
            return db(run)
    raise AssertionError(f"no run {run_id}")
problem = open(problem_path).read()
exec(code)
PYEOF
}

# 1. Two real runs: a seeded one whose scripted replies are faster, wrong, hacked and slower
#    rewrites; and one without a seed whose first step translates the reference.
mkdir -p "$tmp/replay-seeded/replies" "$tmp/replay-translate/replies"
cp $data/seeded/*.txt "$tmp/replay-seeded/replies/"
cp $data/translate/*.txt "$tmp/replay-translate/replies/"
check run-seeded 0 'best speedup' -- "$KS" evolve $problem --seed-kernel $seed --rounds 4 $fast \
  --command "bash tests/e2e/data/replay.sh $tmp/replay-seeded" --run-dir "$tmp/seeded"
check run-translate 0 'best speedup' -- "$KS" evolve $problem --rounds 1 $fast \
  --command "bash tests/e2e/data/replay.sh $tmp/replay-translate" --run-dir "$tmp/translate"
check runs-have-wrong-and-hacked 0 '^incorrect,hacked$' -- sqlite3 "$tmp/seeded/run.db" \
  "select group_concat(status) from (select status from evaluations where status in ('incorrect', 'hacked') order by status desc)"
db_before=$(sha256sum "$tmp/seeded/run.db")

# 2. SFT: correct translations and faster revisions, in TRL's prompt-completion form.
check sft-export 0 'wrote [0-9]+ row' -- "$KS" export sft "$tmp/seeded" "$tmp/translate" \
  -o "$tmp/sft.jsonl"
cp "$tmp/out" "$tmp/sft.out"
check sft-summary-printed 0 'dropped:.*hacked 1.*incorrect 1.*seed 1' -- cat "$tmp/sft.out"
check sft-tokens-printed 0 'tokens per row: min [0-9]+, median' -- cat "$tmp/sft.out"
check db-untouched 0 '^same$' -- bash -c "[ '$db_before' = \"\$(sha256sum '$tmp/seeded/run.db')\" ] && echo same"
check rl-export 0 'wrote [1-9][0-9]* row' -- "$KS" export rl "$tmp/seeded" "$tmp/translate" \
  -o "$tmp/rl.jsonl"
check rl-export-all 0 'wrote [1-9][0-9]* row' -- "$KS" export rl "$tmp/seeded" "$tmp/translate" \
  -o "$tmp/rl_all.jsonl" --selection all

py sft-schema '
for r in sft:
    assert set(r) == {"messages", "prompt", "completion", "meta"}, set(r)
    assert r["messages"] == r["prompt"] + r["completion"]
    assert r["prompt"][0]["role"] == "system" and r["prompt"][-1]["role"] == "user"
    assert [m["role"] for m in r["completion"]] == ["assistant"]
    assert r["meta"]["step_kind"] in ("translation", "evolution")
kinds = sorted({r["meta"]["step_kind"] for r in sft})
assert kinds == ["evolution", "translation"], kinds
print("ok")'
py sft-exact-prompts '
for r in sft:
    req, completion = run_db(r["meta"]["run_id"]).execute("select request, completion from llm_calls where id = ?",
                                      (r["meta"]["llm_call_id"],)).fetchone()
    assert json.loads(req)["messages"] == r["prompt"]
    assert completion == r["completion"][0]["content"]
print("ok")'
py sft-dual-filter '
for r in sft:
    m = r["meta"]
    status, speedup = run_db(m["run_id"]).execute(
        "select status, speedup from evaluations where program_id = ?", (m["program_id"],)).fetchone()
    assert status == "ok" and abs(speedup - m["speedup"]) < 1e-9
    if m["step_kind"] == "evolution":
        assert m["gain"] > 1.0 and abs(m["gain"] - m["speedup"] / m["parent_speedup"]) < 1e-9
s = sft_summary
assert s["steps_seen"] == s["kept"] + sum(s["dropped"].values()), s
assert s["dropped"]["hacked"] == 1 and s["dropped"]["incorrect"] == 1 and s["dropped"]["seed"] == 1
assert s["tokens"]["min"] <= s["tokens"]["median"] <= s["tokens"]["max"]
print("ok")'

# 3. RL: verl layout plus `label`; the ground truth carries the reference and the parent.
py rl-schema '
for r in rl + rl_all:
    assert {"data_source", "prompt", "ability", "reward_model", "extra_info", "label"} <= set(r)
    assert r["reward_model"]["style"] == "rule" and r["label"] == r["reward_model"]["ground_truth"]
    gt = json.loads(r["label"])
    assert gt["reference_code"] == problem and gt["backend"] == "cpu"
    assert gt["parent_runtime_us"] > 0 and gt["parent_speedup"] > 0
    e = r["extra_info"]
    assert e["parent_id"] == gt["parent_id"] and e["parent_speedup"] == gt["parent_speedup"]
    assert e["task_id"] == gt["problem_id"] == "problem"
    if gt["step_kind"] == "evolution":
        code, = run_db(gt["run_id"]).execute("select code from programs where id = ?",
                                             (gt["parent_id"],)).fetchone()
        assert code == gt["parent_code"]
    else:
        assert gt["parent_id"] == "" and gt["parent_code"] == "" and gt["parent_speedup"] == 1.0
assert [r["extra_info"]["index"] for r in rl] == list(range(len(rl)))
assert len(rl_all) >= len(rl)
print("ok")'
py rl-best-is-new-best '
for r in rl:
    e = r["extra_info"]
    best_before = run_db(e["run_id"]).execute(
        "select max(e.speedup) from programs p join evaluations e on e.program_id = p.id "
        "where e.status = \"ok\" and p.seq < (select seq from programs where id = ?)",
        (e["program_id"],)).fetchone()[0]
    assert best_before is None or e["observed_speedup"] > best_before, (e, best_before)
    assert json.loads(r["label"])["step_kind"] == "evolution", e  # revisions only
assert any(json.loads(r["label"])["step_kind"] == "translation" for r in rl_all)
print("ok")'

# 4. Parquet for verl, and the datasets loader (where installed).
check parquet 0 'wrote [0-9]+ row' -- env PYTHONPATH=python python3 -m kernelsmith_worker.jsonl_to_parquet \
  "$tmp/rl.jsonl" "$tmp/rl.parquet"
if python3 -c 'import datasets' 2>/dev/null; then
  check datasets-load 0 '^ok$' -- env HF_DATASETS_OFFLINE=1 HF_DATASETS_CACHE="$tmp/hf" python3 -c "
import datasets
sft = datasets.load_dataset('json', data_files='$tmp/sft.jsonl', split='train')
rl = datasets.load_dataset('parquet', data_files='$tmp/rl.parquet', split='train')
assert sorted(sft.column_names) == ['completion', 'messages', 'meta', 'prompt'], sft.column_names
assert rl[0]['prompt'][0]['role'] == 'system' and rl[0]['reward_model']['style'] == 'rule'
print('ok')"
else
  # scripts/install-deps installs datasets (python/requirements.txt): its absence is a failure
  echo "FAIL datasets-load: python3 cannot import datasets; run scripts/install-deps" >&2
  exit 1
fi

# 5. Errors: missing directory, not a run database, newer schema, nothing to export.
check err-missing 2 'no such run directory' -- "$KS" export sft "$tmp/nope" -o "$tmp/x.jsonl"
mkdir -p "$tmp/notdb" && echo "hello" >"$tmp/notdb/run.db"
check err-not-db 2 'notdb/run.db' -- "$KS" export sft "$tmp/notdb" -o "$tmp/x.jsonl"
mkdir -p "$tmp/empty"
check err-no-run-db 2 'holds no run.db' -- "$KS" export rl "$tmp/empty" -o "$tmp/x.jsonl"
mkdir -p "$tmp/newer" && cp "$tmp/translate/run.db" "$tmp/newer/run.db"
sqlite3 "$tmp/newer/run.db" "update schema_version set version = 99"
check err-newer 2 'newer than the latest' -- "$KS" export rl "$tmp/newer" -o "$tmp/x.jsonl"
check err-selection 2 'selection' -- "$KS" export rl "$tmp/seeded" -o "$tmp/x.jsonl" --selection first
check err-empty 1 'nothing to export: .*below_min_gain' -- "$KS" export sft "$tmp/seeded" \
  -o "$tmp/none.jsonl" --min-gain 1000
check err-empty-no-file 0 '^summary only$' -- bash -c "[ ! -e '$tmp/none.jsonl' ] && [ -e '$tmp/none.summary.json' ] && echo 'summary only'"

# 6. A run directory copied elsewhere, without its problem file, is self-contained: run.db
#    keeps the problem's source. Export, report and --resume work from a directory where the
#    recorded problem path does not exist; a different file at that path gets a warning.
mkdir -p "$tmp/elsewhere"
cp -r "$tmp/seeded" "$tmp/elsewhere/copied"
cp -r "$tmp/translate" "$tmp/elsewhere/copied-translate"  # no seed file to carry along
check copied-export 0 'wrote [1-9][0-9]* row' -- bash -c \
  "cd '$tmp/elsewhere' && [ ! -e $problem ] && '$KS' export rl copied -o rl.jsonl"
py copied-export-same-rows '
copied = load(f"{tmp}/elsewhere/rl.jsonl")
assert [r["reward_model"]["ground_truth"] for r in copied] == \
    [r["reward_model"]["ground_truth"] for r in rl if r["extra_info"]["run_id"] == "seeded"]
assert "reference_missing" not in json.load(open(f"{tmp}/elsewhere/rl.summary.json"))["dropped"]
print("ok")'
check copied-report 0 'The problem \(sha256' -- bash -c \
  "cd '$tmp/elsewhere' && '$KS' report copied -o r.html >/dev/null && cat r.html"
check copied-resume 0 'best speedup' -- bash -c \
  "cd '$tmp/elsewhere' && '$KS' evolve --resume --run-dir copied-translate --backend cpu"
mkdir -p "$tmp/elsewhere/$(dirname $problem)"
sed 's/sum(/sum( /' $problem >"$tmp/elsewhere/$problem"
check copied-changed-file-warns 0 'warning: .*differs from the problem run .seeded. was made for' \
  -- bash -c "cd '$tmp/elsewhere' && '$KS' export sft copied -o sft.jsonl"
check copied-resume-warns 0 'warning: .*problem.py differs from the problem' -- bash -c \
  "cd '$tmp/elsewhere' && '$KS' evolve $problem --resume --run-dir copied-translate --backend cpu"

if [ "${KS_UPDATE_FIXTURES:-0}" = 1 ]; then
  mkdir -p $data/fixture
  cp "$tmp/sft.jsonl" "$tmp/rl.jsonl" "$tmp/sft.summary.json" $data/fixture/
  echo "updated $data/fixture/"
fi

if [ "$failures" -ne 0 ]; then
  echo "e2e export: $failures failure(s)"
  exit 1
fi
echo "e2e export: all passed"
