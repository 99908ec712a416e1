#!/usr/bin/env bash
# kill -9 of `kernelsmith evolve` at seeded random moments, then --resume, again and again
# until the run finishes; checks that nothing completed before a kill is lost, nothing is
# evaluated twice, SQLite's integrity check passes after every kill, and best.py and
# summary.json agree with run.db at the end. About 4 minutes on 2 cores (cpu backend); the
# default 12 kills cover all four moments with the default seed.
# Usage: tests/e2e/crash.sh path/to/kernelsmith [--kills N] [--seed S]
#
# Each trial starts the run (the first) or resumes it, waits for one of four moments picked
# by the seeded RNG, and sends SIGKILL:
#   startup     0-2 s after the start (worker start-up, recovery, the seed's evaluation)
#   evaluating  0-1.5 s after the run's next evaluation is stored
#   proposing   0-0.3 s after the next program is stored (often before its evaluation)
#   committing  0-0.1 s after the next end-of-round state is stored
# When the run finishes before all kills are done, --rounds is raised and the run resumed.
set -u
KS=$(realpath "${1:-build/kernelsmith}")
shift || true
kills=12
seed=20251122
while [ $# -gt 0 ]; do
  case $1 in
    --kills) kills=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) echo "usage: $0 KERNELSMITH [--kills N] [--seed S]" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/../.."
data=tests/e2e/data/crash
tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
source tests/e2e/lib.sh

run="$tmp/run"
db="$run/run.db"
rounds=8
flags="--backend cpu --trials 1 --islands 2 --parallel-proposals 2 --migration-interval 2"
RANDOM=$seed

# sql QUERY: one read of run.db (0 rows and no output when it does not exist yet).
sql() {
  [ -f "$db" ] || return 0
  sqlite3 -cmd ".timeout 10000" "$db" "$1" 2>/dev/null
}
count() { local n; n=$(sql "$1"); echo "${n:-0}"; }
n_evals() { count "select count(*) from evaluations"; }
n_programs() { count "select count(*) from programs"; }
round_done() { count "select coalesce(json_extract(value, '\$.round_done'), -1) from run_state where key = 'engine'"; }
now_ms() { date +%s%3N; }

# wait_until CMD VALUE: polls until $(CMD) > VALUE or the run exits; 0 when it happened.
wait_until() {
  local deadline=$(($(now_ms) + 120000))
  while kill -0 "$pid" 2>/dev/null && [ "$(now_ms)" -lt $deadline ]; do
    [ "$($1)" -gt "$2" ] && return 0
    sleep 0.05
  done
  return 1
}

start() {
  local resume=""
  [ -f "$run/run.json" ] && resume="--resume"
  "$KS" evolve $data/problem.py --seed-kernel $data/seed.py --rounds $rounds $flags \
    --seed 7 --run-dir "$run" $resume >>"$tmp/sessions.log" 2>&1 &
  pid=$!
}

trials=0
finished_early=0
pending_seen=0
declare -A moments=()
t0=$(date +%s)
while [ $trials -lt "$kills" ]; do
  evals_before=$(n_evals)
  programs_before=$(n_programs)
  round_before=$(round_done)
  start
  delay_ms=0
  case $((RANDOM % 4)) in
    0) moment=startup; delay_ms=$((RANDOM % 2000)) ;;
    1) moment=evaluating; wait_until n_evals "$evals_before"; delay_ms=$((RANDOM % 1500)) ;;
    2) moment=proposing; wait_until n_programs "$programs_before"; delay_ms=$((RANDOM % 300)) ;;
    3) moment=committing; wait_until round_done "$round_before"; delay_ms=$((RANDOM % 100)) ;;
  esac
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rc=$?
  pid=""
  if [ $rc -ne 137 ]; then  # it ended before the kill
    if [ $rc -ne 0 ]; then
      fail "session exited with $rc before its kill (trial $((trials + 1)))" "$tmp/sessions.log"
      break
    fi
    finished_early=$((finished_early + 1))
    rounds=$((rounds + 4))  # the run finished first: continue it with more rounds
    continue
  fi
  trials=$((trials + 1))
  moments[$moment]=$((${moments[$moment]:-0} + 1))
  integrity=$(sql "pragma integrity_check")
  if [ -f "$db" ] && [ "$integrity" != "ok" ]; then
    fail "integrity_check after kill $trials ($moment): $integrity"
  fi
  # What the database holds now must all be there at the end, unchanged.
  sql "select e.program_id || ' ' || p.code_hash || ' ' || e.status || ' ' || coalesce(e.speedup, '-')
       from evaluations e join programs p on p.id = e.program_id" >>"$tmp/seen"
  pending=$(count "select count(*) from programs p left join evaluations e on e.program_id = p.id where e.program_id is null")
  [ "$pending" -gt 0 ] && pending_seen=$((pending_seen + 1))
  echo "kill $trials: $moment +${delay_ms} ms: $(n_evals) evaluations, $(n_programs) programs ($pending pending), round $(round_done)"
done

# The last session runs to the end.
check final-resume 0 'best speedup' -- "$KS" evolve $data/problem.py --resume --run-dir "$run" \
  --rounds $rounds
check integrity 0 '^ok$' -- sql "pragma integrity_check"
check foreign-keys 0 "^0$" -- sql "select count(*) from pragma_foreign_key_check"
check one-evaluation-per-program 0 '^0 0$' -- sql \
  "select (select count(*) from programs p left join evaluations e on e.program_id = p.id
           where e.program_id is null) || ' ' ||
          (select count(*) - count(distinct program_id) from evaluations)"
check no-code-evaluated-twice 0 '^0$' -- sql \
  "select count(*) from (select code_hash from programs join evaluations on id = program_id
                         group by code_hash having count(*) > 1)"
sql "select e.program_id || ' ' || p.code_hash || ' ' || e.status || ' ' || coalesce(e.speedup, '-')
     from evaluations e join programs p on p.id = e.program_id" | sort -u >"$tmp/final"
sort -u "$tmp/seen" >"$tmp/seen.sorted"
lost=$(comm -23 "$tmp/seen.sorted" "$tmp/final" | wc -l)
if [ "$lost" -ne 0 ]; then
  fail "evaluations lost or changed after a kill: $(comm -23 "$tmp/seen.sorted" "$tmp/final" | head -5 | tr '\n' ';')"
else
  ok "nothing lost: $(wc -l <"$tmp/seen.sorted") evaluation(s) seen after kills, $(wc -l <"$tmp/final") at the end"
fi
check summary-and-best-agree-with-db 0 '^consistent' -- python3 - "$run" "$rounds" <<'EOF'
import json, sqlite3, sys
run, rounds = sys.argv[1], int(sys.argv[2])
s = json.load(open(f"{run}/summary.json"))
db = sqlite3.connect(f"{run}/run.db")
by_status = dict(db.execute("select status, count(*) from evaluations group by status"))
problems = []
if s["candidates_by_status"] != by_status:
    problems.append(f"candidates_by_status {s['candidates_by_status']} != db {by_status}")
if s["evaluations"] != sum(by_status.values()):
    problems.append(f"evaluations {s['evaluations']} != db {sum(by_status.values())}")
if s["rounds_done"] != rounds:
    problems.append(f"rounds_done {s['rounds_done']} != {rounds}")
row = db.execute("select p.code, e.status, e.speedup from programs p join evaluations e "
                 "on e.program_id = p.id where p.id = ?", (s["best_program_id"],)).fetchone()
if row is None:
    problems.append(f"best_program_id {s['best_program_id']!r} has no evaluation in run.db")
else:
    code, status, speedup = row
    if status != "ok" or abs(speedup - s["best_speedup"]) > 1e-9 * max(1.0, speedup):
        problems.append(f"best {s['best_program_id']}: db {status} {speedup} vs summary "
                        f"{s['best_speedup']}")
    if open(f"{run}/best.py").read() != code:
        problems.append(f"best.py is not the code of {s['best_program_id']}")
state = json.loads(db.execute("select value from run_state where key = 'engine'").fetchone()[0])
if state.get("best_id") != s["best_program_id"]:
    problems.append(f"stored engine state best {state.get('best_id')} != summary")
print("\n".join(problems) if problems else
      f"consistent: best {s['best_program_id']} {s['best_speedup']:.3f}x, "
      f"{s['evaluations']} evaluations")
EOF

summary_moments=""
for m in startup evaluating proposing committing; do summary_moments+=" $m=${moments[$m]:-0}"; done
echo "kill moments:$summary_moments; kills that left a stored, unevaluated program: $pending_seen;" \
  "sessions that finished before their kill: $finished_early; $(($(date +%s) - t0)) s"
[ "$trials" -ge "$kills" ] || fail "only $trials of $kills kill trials ran"
echo "kill trials: $trials, evaluations lost: $lost"
if [ "$failures" -ne 0 ]; then
  echo "e2e crash: $failures failure(s)"
  exit 1
fi
echo "e2e crash: all passed"
