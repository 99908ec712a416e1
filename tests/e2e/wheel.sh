#!/usr/bin/env bash
# The pip package end to end: builds and repairs the wheel (scripts/build-wheel), installs it
# into a fresh virtual environment outside the checkout (system site-packages visible, so the
# installed torch is reused and nothing is downloaded), and runs the installed `kernelsmith`
# from a temporary directory with no PYTHONPATH: --version, eval and a 2-round tuner evolve on
# the cpu example; the reward adapters import; no installed file names the checkout or the
# build tree.
# Usage: tests/e2e/wheel.sh
set -u
cd "$(dirname "$0")/../.."
root=$(pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source tests/e2e/lib.sh
unset PYTHONPATH KS_RESOURCE_DIR KS_PYTHON

if ! wheel=$(scripts/build-wheel | tail -1); then
  fail "build-wheel"
  exit 1
fi
ok "build-wheel $(basename "$wheel")"
check wheel-is-manylinux 0 'manylinux' -- echo "$wheel"
# The glibc the wheel asks for is no newer than docs/packaging.md's tag says (its heading
# "manylinux tag: `manylinux_2_N_x86_64`"): a newer symbol in the binary or a copied library
# fails here. Of several tags in the name, the oldest glibc counts (pip takes any).
documented=$(grep -oE '^### manylinux tag: `manylinux_2_[0-9]+_x86_64`' docs/packaging.md |
  grep -oE '[0-9]+_x86_64' | cut -d_ -f1)
built=$(basename "$wheel" | grep -oE 'manylinux_2_[0-9]+_x86_64' | cut -d_ -f3 | sort -n | head -1)
if [ -z "$documented" ] || [ -z "$built" ]; then
  fail "wheel-tag: no manylinux_2_N tag (documented: '$documented', wheel: $(basename "$wheel"))"
elif [ "$built" -gt "$documented" ]; then
  python3 -m auditwheel show "$wheel" >"$tmp/show" 2>&1
  fail "wheel-tag: $(basename "$wheel") needs glibc 2.$built, docs/packaging.md says 2.$documented" \
    "$tmp/show"
else
  ok "wheel-tag manylinux_2_${built}_x86_64 (documented: manylinux_2_${documented}_x86_64)"
fi

python3 -m venv --system-site-packages "$tmp/venv"
# From a copy outside the checkout (pip records where the wheel came from). --no-index: torch,
# triton and numpy come from the system site-packages, never a download.
cp "$wheel" "$tmp/" && wheel="$tmp/$(basename "$wheel")"
check pip-install 0 'Successfully installed kernelsmith' -- \
  "$tmp/venv/bin/pip" install --no-index "$wheel"
ks="$tmp/venv/bin/kernelsmith"
py="$tmp/venv/bin/python"
mkdir "$tmp/work" && cp examples/colsum/problem.py examples/colsum/cpu_seed.py "$tmp/work/"
cd "$tmp/work"

version=$("$py" -c 'import importlib.metadata as m; print(m.version("kernelsmith"))')
check version-matches 0 "^kernelsmith $version\$|^$version\$" -- "$ks" --version
check eval 0 'status +ok' -- "$ks" eval problem.py cpu_seed.py --backend cpu --trials 2
check evolve-tuner 0 'best speedup: ' -- \
  "$ks" evolve problem.py --seed-kernel cpu_seed.py --backend cpu --proposer tuner --rounds 2 \
  --trials 2 --islands 1 --run-dir "$tmp/run"
check evolve-best 0 '"best_speedup": [0-9]' -- cat "$tmp/run/summary.json"
check rewards-import 0 '^ok$' -- \
  "$py" -c 'import kernelsmith.rewards, kernelsmith_rewards, kernelsmith_worker, kernelsmith_curate; assert kernelsmith_rewards is kernelsmith.rewards; print("ok")'
check python-m 0 "^kernelsmith $version\$|^$version\$" -- "$py" -m kernelsmith --version
# Moved away from its resources (with the libraries auditwheel put at ../../kernelsmith.libs)
# the binary says what it looked for.
bin=$("$py" -c 'import kernelsmith; print(kernelsmith.binary_path())')
mkdir -p "$tmp/moved/pkg/bin" && cp "$bin" "$tmp/moved/pkg/bin/"
cp -r "$(dirname "$(dirname "$(dirname "$bin")")")/kernelsmith.libs" "$tmp/moved/"
check moved-binary 2 'not found .*moved/pkg/share/kernelsmith/prompts.*KS_RESOURCE_DIR' \
  -- "$tmp/moved/pkg/bin/kernelsmith" eval problem.py cpu_seed.py --backend cpu

# No installed file refers to the checkout (source path) or the build tree.
"$py" - "$tmp/files" <<'PY'
import importlib.metadata as m, os, sys
dist = m.distribution("kernelsmith")
with open(sys.argv[1], "w") as f:
    for p in dist.files:
        path = os.path.realpath(p.locate())
        if os.path.isfile(path) and "__pycache__" not in path:
            f.write(path + "\n")
PY
check installed-files 0 'kernelsmith/bin/kernelsmith$' -- cat "$tmp/files"
check installed-prompts 0 'share/kernelsmith/prompts/cpu/system.md$' -- cat "$tmp/files"
hits=$(xargs -d "\n" grep -laF -e "$root" <"$tmp/files")
if [ -n "$hits" ]; then fail "no-build-paths: these name $root: $hits"; else ok "no-build-paths"; fi

echo "wheel: $failures failure(s)"
exit $((failures > 0))
