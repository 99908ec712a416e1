#!/usr/bin/env bash
# End-to-end test of `kernelsmith report` on the cpu backend: a one-round bench of
# the suite of tests/e2e/make-suite.sh, then the report; the page is self-contained and holds the
# curves, metric tables and a diff. With Debian's chromium it is also rendered headless.
# Usage: tests/e2e/report.sh path/to/kernelsmith
set -u
KS=$(realpath "${1:-build/kernelsmith}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source tests/e2e/lib.sh
tests/e2e/make-suite.sh "$tmp/suite"

if ! "$KS" bench "$tmp/suite" --rounds 1 --backend cpu --trials 2 --islands 1 \
  --parallel-proposals 2 --run-dir "$tmp/b" >"$tmp/bench.out" 2>&1; then
  fail "bench"
  tail -20 "$tmp/bench.out"
fi

"$KS" report "$tmp/b" >"$tmp/report.out" 2>&1 && ok "report-exit" || fail "report-exit"
html="$tmp/b/report.html"
if [ -s "$html" ]; then ok "report-file"; else fail "report-file: $html missing"; fi
grep -q '<svg' "$html" && ok "report-svg" || fail "report-svg"
grep -q '<polyline' "$html" && ok "report-curve" || fail "report-curve"
missing_headers=0
for h in corr fast_1.0 fast_1.2 fast_1.5 fast_2.0 avg_amsr geomean 'rounds to best'; do
  grep -q "<th>$h</th>" "$html" || { fail "report-header $h"; missing_headers=1; }
done
[ "$missing_headers" -eq 0 ] && ok "report-headers"
grep -q '<pre class="diff">' "$html" && ok "report-diff" || fail "report-diff"
# The metric table says what bench.json says: the overall row's figures, cell by cell.
if python3 - "$html" "$tmp/b/bench.json" <<'PY'
import json, re, sys
html, bench = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
row = re.search(r"<td>overall</td>(.*?)</tr>", html, re.S)
cells = re.findall(r"<td>(.*?)</td>", row.group(1)) if row else []
g = bench["overall"]
keys = ["problems", "skipped", "correct", "corr", "fast_1.0", "fast_1.2", "fast_1.5",
        "fast_2.0", "avg_amsr", "geomean_speedup"]
assert len(cells) >= len(keys), cells
for key, cell in zip(keys, cells):
    want = g.get(key)
    if cell == "-":
        assert want is None, (key, cell, want)
    elif cell.endswith("%"):
        assert abs(float(cell[:-1]) - 100 * want) <= 0.051, (key, cell, want)
    else:
        decimals = len(cell.split(".")[1]) if "." in cell else 0
        assert abs(float(cell) - want) <= 0.51 * 10 ** -decimals, (key, cell, want)
PY
then ok "report-figures"; else fail "report-figures"; fi
grep -q 'level1/2_ColSumNoSeed' "$html" && ok "report-skipped-row" || fail "report-skipped-row"
# The roofline: a plot per timed problem, and bench.json's mean % of the floor.
grep -q '<h2>Roofline (measured peaks)</h2>' "$html" && grep -q 'class="chart roofline"' "$html" &&
  grep -Eq 'floor [0-9.]+ us \([a-z-]+.*best [0-9.]+% of the floor' "$html" && ok "report-roofline" ||
  fail "report-roofline"
grep -Eq '"mean_pct_of_floor": ?[0-9]' "$tmp/b/bench.json" && ok "bench-json-pct-of-floor" ||
  fail "bench-json-pct-of-floor"
if grep -Eiq "(src|href)=[\"']?(https?:)?//" "$html" || grep -Eiq '<script|@import|url\(' "$html"; then
  fail "report-self-contained"
else
  ok "report-self-contained"
fi

"$KS" report "$tmp/b" -o "$tmp/other.html" >/dev/null 2>&1 && [ -s "$tmp/other.html" ] &&
  ok "report-output-flag" || fail "report-output-flag"
"$KS" report "$tmp/b/problems/level1/1_ColSum" -o "$tmp/run.html" >/dev/null 2>&1 &&
  grep -q '<svg' "$tmp/run.html" && ok "report-single-run" || fail "report-single-run"
"$KS" report "$tmp/nothing" >/dev/null 2>&1
[ $? -eq 2 ] && ok "report-bad-dir" || fail "report-bad-dir"

if command -v chromium >/dev/null 2>&1; then
  png="$tmp/shot.png"
  timeout 120 chromium --headless --no-sandbox --disable-gpu --screenshot="$png" \
    --window-size=1200,2000 "file://$html" >"$tmp/chromium.out" 2>&1
  size=$(stat -c %s "$png" 2>/dev/null || echo 0)
  if [ "$size" -gt 20000 ]; then ok "report-chromium-screenshot ($size bytes)"; else fail "report-chromium-screenshot"; fi
  # The DOM as the browser built it: the plots and tables must be there after loading.
  timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$html" \
    >"$tmp/dom.html" 2>"$tmp/chromium-dom.out"
  svgs=$(grep -o '<svg' "$tmp/dom.html" | wc -l)
  tables=$(grep -o '<table' "$tmp/dom.html" | wc -l)
  if [ "$svgs" -ge 2 ] && [ "$tables" -ge 2 ] && grep -q '<polyline' "$tmp/dom.html"; then
    ok "report-chromium-dom ($svgs plots, $tables tables)"
  else
    fail "report-chromium-dom ($svgs plots, $tables tables)"
  fi
else
  echo "skip report-chromium: chromium is not installed"
fi

if [ "$failures" -ne 0 ]; then
  echo "e2e report: $failures failure(s)"
  exit 1
fi
echo "e2e report: all passed"
