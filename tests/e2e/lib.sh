# Shared by the e2e scripts (source it after setting $tmp): fail, ok, check, and the
# `failures` counter that each script turns into its exit status.
failures=0

# evolve re-measures its best kernel at the end (a fresh worker, a few seconds); the tests of
# other things skip that, evolve.sh's first run checks it.
export KS_NO_VERIFY=1

# fail MESSAGE [LOG]: counts a failure and shows the tail of LOG.
fail() {
  echo "FAIL $1"
  [ -f "${2:-}" ] && sed 's/^/    /' "$2" | tail -40
  failures=$((failures + 1))
}

ok() { echo "ok   $1"; }

# check NAME EXPECTED_EXIT PATTERN -- command...: exit status and output (extended regex).
check() {
  local name=$1 want=$2 pattern=$3
  shift 4
  "$@" >"$tmp/out" 2>&1
  local got=$?
  if [ "$got" -ne "$want" ] || ! grep -Eq -- "$pattern" "$tmp/out"; then
    fail "$name: exit $got (want $want)" "$tmp/out"
  else
    ok "$name"
  fi
}
