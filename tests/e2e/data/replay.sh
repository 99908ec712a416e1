#!/usr/bin/env bash
# A stand-in for an LLM CLI: `replay.sh DIR` prints DIR/replies/N.txt for the Nth call (the
# counter lives in DIR/count), exits 1 for a reply named N.fail, and ignores its stdin prompt.
set -eu
dir=$1
n=$(( $(cat "$dir/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$dir/count"
cat >/dev/null
if [ -f "$dir/replies/$n.fail" ]; then echo "model backend unavailable" >&2; exit 1; fi
if [ -f "$dir/replies/$n.txt" ]; then cat "$dir/replies/$n.txt"; else echo "I have no further ideas."; fi
