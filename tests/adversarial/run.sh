#!/usr/bin/env bash
# Runs the adversarial corpus (tests/adversarial/manifest.json) through the real CLI and checks
# every verdict: cheating candidates must be rejected with the expected status and finding,
# honest ones accepted.
#
# Usage: tests/adversarial/run.sh BINARY [--gpu] [--out FILE.md] [--jobs N] [--only REGEX]
#                                        [--expect ok|rejected] [--keep DIR]
#   (default)  the CPU part: cpu-backend entries, and triton entries in Triton's interpreter
#              (TRITON_INTERPRET=1); gpu_only entries are skipped.
#   --gpu      the GPU part: triton entries compiled for the GPU and the gpu_only entries.
#   --out      also write the results table as markdown to FILE.md.
#   --jobs     evaluations run at once (default 2).
#   --only     run only the entries whose id matches REGEX (Python re.search).
#   --expect   run only the honest entries (ok) or only the cheats (rejected).
#   --keep     also keep each entry's EvalResult (<id>.json) and stderr (<id>.log) in DIR,
#              written there as each entry ends (a run cut short keeps what it finished).
# Exit status: 0 when every verdict matches the manifest, 1 otherwise, 2 on usage errors.
# JSON is read by verdicts.py (python3, which the worker needs anyway), so jq is not needed.
set -u
KS=${1:-}
if [ -z "$KS" ] || [ ! -x "$KS" ]; then
  echo "usage: tests/adversarial/run.sh BINARY [--gpu] [--out FILE.md] [--jobs N] [--only REGEX] [--expect ok|rejected] [--keep DIR]" >&2
  echo "  BINARY must be an executable kernelsmith (got '${KS}'); build it with make" >&2
  exit 2
fi
KS=$(cd "$(dirname "$KS")" && pwd)/$(basename "$KS")
shift
part=cpu out=() jobs=2 only="" expect=() keep=""
while [ $# -gt 0 ]; do
  case $1 in
    --gpu) part=gpu ;;
    --out) out=(--out "$(realpath -m "${2:?--out needs a file}")"); shift ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift ;;
    --only) only=${2:?--only needs a regex}; shift ;;
    --expect) expect=(--expect "${2:?--expect needs ok or rejected}"); shift ;;
    --keep) keep=$(realpath -m "${2:?--keep needs a directory}"); shift ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
PY=${KS_PYTHON:-python3}
cd "$(dirname "$0")/../.."
here=tests/adversarial
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$PY" $here/verdicts.py list $here/manifest.json "$part" "$only" "${expect[@]}" >"$tmp/entries" || exit 2
[ -s "$tmp/entries" ] || { echo "run.sh: no entries selected" >&2; exit 2; }

# One evaluation (a tab-separated entry line): $TMP/<id>.json (EvalResult), $TMP/<id>.log.
evaluate() {
  local id file problem backend timing
  IFS=$'\t' read -r id file problem backend timing <<<"$1"
  local -a cmd=("$KS" eval "$problem" "$file" --backend "$backend" --json)
  local t0=$SECONDS rc
  [ "$timing" = 1 ] || cmd+=(--no-timing)
  if [ "$PART" = cpu ] && [ "$backend" = triton ]; then
    env TRITON_INTERPRET=1 "${cmd[@]}" >"$TMP/$id.json" 2>"$TMP/$id.log"
  else
    env -u TRITON_INTERPRET "${cmd[@]}" >"$TMP/$id.json" 2>"$TMP/$id.log"
  fi
  rc=$?
  echo "  $id: exit $rc ($((SECONDS - t0)) s)" >&2
}
export -f evaluate
results=$tmp
[ -z "$keep" ] || { mkdir -p "$keep" && results=$keep; }
export KS PART=$part TMP=$results
echo "adversarial: $(wc -l <"$tmp/entries") entries ($part part), $jobs at a time" >&2
start=$(date +%s)
tr '\n' '\0' <"$tmp/entries" | xargs -0 -P "$jobs" -I{} bash -c 'evaluate "$1"' _ {}
"$PY" $here/verdicts.py check $here/manifest.json "$results" "$part" "$(( $(date +%s) - start ))" \
  "$only" "${out[@]}" "${expect[@]}"
exit $?
